-- recover: a verification of the gate (Gate.Recover) redoes the returns the data set may have
-- lost: the reservations ARGV[2], ARGV[4], ... (order ids) of users ARGV[3], ARGV[5], ...
-- ended in PostgreSQL. An order already in the set of returned orders changes nothing. A new
-- one joins it, and gives its unit back only if the gate still counts its buyer: then the
-- gate is from before the return (its buyers left the set only by a return, a give-back or a
-- dead letter, each of which gives the unit back). A buyer it does not count was never
-- admitted in this data set (it is from before the purchase), and its unit was never taken.
-- ARGV[1] is the data set the caller verifies: if Redis serves another by now, nothing
-- changes.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] pending, KEYS[4] returned orders (set).
-- Returns the units given back, -1 the data set changed, -2 the gate is gone.
if dataset() ~= ARGV[1] then
  return -1
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -2
end
local n = 0
for i = 2, #ARGV, 2 do
  if redis.call('SADD', KEYS[4], ARGV[i]) == 1 and redis.call('SREM', KEYS[2], ARGV[i + 1]) == 1 then
    redis.call('INCR', KEYS[1])
    redis.call('HDEL', KEYS[3], ARGV[i + 1])
    n = n + 1
  end
end
return n
