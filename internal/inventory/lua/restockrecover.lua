-- restockrecover: a verification of the gate (Gate.RecoverRestocks) redoes the restocks the
-- data set may have lost: keys ARGV[2], ARGV[4], ... of units ARGV[3], ARGV[5], ... A key in
-- the set of restocks the gate counts changes nothing: the set and the stock change together
-- (restock.lua, publish.lua), so a data set that has the key has the units. A key it lacks is
-- from after this data set: its units are added.
-- ARGV[1] is the data set the caller verifies: if Redis serves another by now, nothing changes.
-- KEYS[1] stock, KEYS[2] restocked keys (set).
-- Returns the restocks added, -1 the data set changed, -2 the gate is gone.
if dataset() ~= ARGV[1] then
  return -1
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -2
end
local n = 0
for i = 2, #ARGV, 2 do
  if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then
    redis.call('INCRBY', KEYS[1], ARGV[i + 1])
    n = n + 1
  end
end
return n
