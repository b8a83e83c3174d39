-- restock: a restock of the product committed in PostgreSQL (its row in restocks, key ARGV[1],
-- units ARGV[2]): add its units to the gate once per key, whoever drives it, however often. A
-- key already in the set of restocks the gate counts changes nothing; a new one joins it and
-- its units join the stock, in one step, so the set says exactly which restocks the stock
-- counts (a seeding puts the keys its snapshot counts there: see publish.lua).
-- A gate that does not exist (never seeded, or Redis lost its data) is left alone: the seeding
-- that creates it reads PostgreSQL, which has the units.
-- KEYS[1] stock, KEYS[2] restocked keys (set).
-- Returns 1 added now, 0 not (added before, or no gate).
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
if redis.call('SADD', KEYS[2], ARGV[1]) == 0 then
  return 0
end
redis.call('INCRBY', KEYS[1], ARGV[2])
return 1
