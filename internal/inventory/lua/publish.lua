-- publish: ends a seeding of the gate. The buyers were loaded chunk by chunk into KEYS[4];
-- it becomes the buyers set and the stock is set, in one step, so the gate never exists
-- half-loaded. With ARGV[1] == "init" nothing changes if the gate exists already (another
-- process seeded it first); with "sync" the gate is overwritten (PostgreSQL refused an
-- admitted buyer: PostgreSQL is the truth). Pending admissions are dropped either way: their
-- purchases confirm themselves, or fail in PostgreSQL, which the seed reflects.
-- Buyers confirmed while the gate did not exist (KEYS[5], see confirm.lua) whose orders the
-- seed's snapshot missed (committed after it was taken) are added, each taking its unit.
-- Ended reservations whose units the seed's stock counts and whose return to the gate may
-- still be driven, or redone (ARGV[4] of them, order ids, from ARGV[5]: see Seeding.Returned)
-- go into the set of returned orders (KEYS[6]), so that their return (return.lua,
-- recover.lua), driven later, does not count them again. The arguments after them are the keys
-- of restocks whose units the seed's stock counts (see Seeding.Restocked): they go into the
-- set of restocks the gate counts (KEYS[8]) for the same reason (restock.lua,
-- restockrecover.lua). The gate is stamped (KEYS[7], see stamp.lua) as agreeing with
-- PostgreSQL's read at ARGV[3] (ms) in this data set.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] pending, KEYS[4] the loaded buyers, KEYS[5] late
-- buyers, KEYS[6] returned orders, KEYS[7] the stamp, KEYS[8] restocked keys. ARGV[2] stock.
-- Returns 1 written, 0 left as it was.
if ARGV[1] == 'init' and redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('UNLINK', KEYS[4])
  return 0
end
local stock = tonumber(ARGV[2])
for _, user in ipairs(redis.call('SMEMBERS', KEYS[5])) do
  if redis.call('SADD', KEYS[4], user) == 1 then
    stock = stock - 1
  end
end
redis.call('UNLINK', KEYS[2], KEYS[3], KEYS[5])
if redis.call('EXISTS', KEYS[4]) == 1 then
  redis.call('RENAME', KEYS[4], KEYS[2])
  redis.call('PERSIST', KEYS[2])
end
redis.call('SET', KEYS[1], math.max(stock, 0))
local returned = tonumber(ARGV[4])
for i = 5, 4 + returned do
  redis.call('SADD', KEYS[6], ARGV[i])
end
for i = 5 + returned, #ARGV do
  redis.call('SADD', KEYS[8], ARGV[i])
end
redis.call('SET', KEYS[7], dataset() .. '|' .. ARGV[3])
return 1
