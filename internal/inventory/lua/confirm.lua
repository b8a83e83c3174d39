-- confirm: PostgreSQL holds the order of user ARGV[1]: the admission is final. It is counted
-- already, unless the gate was re-seeded from PostgreSQL while the purchase was in flight:
-- the seed then counted the unit as free and left the buyer out, so add the buyer and take
-- the unit now. A gate that does not exist (Redis lost its data and nobody has re-seeded it
-- yet) is left alone: its seed will read this order from PostgreSQL.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] pending.
-- Returns 0 nothing to repair, 1 repaired, -1 no unit left to take: sync the gate.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HDEL', KEYS[3], ARGV[1])
if redis.call('SADD', KEYS[2], ARGV[1]) == 0 then
  return 0
end
if tonumber(redis.call('GET', KEYS[1])) > 0 then
  redis.call('DECR', KEYS[1])
  return 1
end
return -1
