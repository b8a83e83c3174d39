-- return: the reservations ARGV[1], ARGV[3], ... (order ids) of users ARGV[2], ARGV[4], ...
-- ended in PostgreSQL (expired or cancelled), which gave their units back to stock: give them
-- back to the gate too, once per order whoever drives it, however often. An order already in
-- the set of returned orders changes nothing; a new one gives its unit back, and its buyer,
-- who no longer holds an order, leaves the buyers (and any admission of theirs still
-- pending: that purchase is settled, its order ended).
-- A gate that does not exist (never seeded, or Redis lost its data) is left alone: the
-- seeding that creates it reads PostgreSQL, which has the unit back.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] pending, KEYS[4] returned orders (set).
-- Returns the number of units given back now.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('SADD', KEYS[4], ARGV[i]) == 1 then
    redis.call('INCR', KEYS[1])
    redis.call('SREM', KEYS[2], ARGV[i + 1])
    redis.call('HDEL', KEYS[3], ARGV[i + 1])
    n = n + 1
  end
end
return n
