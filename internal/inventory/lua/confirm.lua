-- confirm: PostgreSQL holds the orders of users ARGV[2..n] (a batch's buyers, or one): their
-- admissions are final. Each is counted already, unless the gate was re-seeded from PostgreSQL
-- while the purchase was in flight: the seed then counted the unit as free and left the buyer
-- out, so add the buyer and take the unit now. A gate that does not exist (Redis lost its data
-- and nobody has re-seeded it yet) is not created here: the buyers go into KEYS[4], kept
-- ARGV[1] ms, for the seeding that may be reading PostgreSQL right now from a snapshot taken
-- before these orders committed: its publish (publish.lua) adds those its snapshot missed. A
-- seeding whose snapshot is later reads these orders itself.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] pending, KEYS[4] late buyers.
-- Returns 0 nothing to repair, 1 repaired, -1 some buyer found no unit left to take: sync
-- the gate.
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('SADD', KEYS[4], unpack(ARGV, 2))
  redis.call('PEXPIRE', KEYS[4], ARGV[1])
  return 0
end
local res = 0
for i = 2, #ARGV do
  local user = ARGV[i]
  redis.call('HDEL', KEYS[3], user)
  if redis.call('SADD', KEYS[2], user) == 1 then
    if tonumber(redis.call('GET', KEYS[1])) > 0 then
      redis.call('DECR', KEYS[1])
      if res == 0 then
        res = 1
      end
    else
      res = -1
    end
  end
end
return res
