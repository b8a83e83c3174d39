-- confirm: PostgreSQL holds the orders of users ARGV[1..n] (a batch's buyers, or one): their
-- admissions are final. Each is counted already, unless the gate was re-seeded from PostgreSQL
-- while the purchase was in flight: the seed then counted the unit as free and left the buyer
-- out, so add the buyer and take the unit now. A gate that does not exist (Redis lost its data
-- and nobody has re-seeded it yet) is left alone: its seed will read these orders from
-- PostgreSQL.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] pending.
-- Returns 0 nothing to repair, 1 repaired, -1 some buyer found no unit left to take: sync
-- the gate.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local res = 0
for _, user in ipairs(ARGV) do
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
