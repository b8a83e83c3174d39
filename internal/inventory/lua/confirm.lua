-- confirm: after PostgreSQL committed the order of admitted user ARGV[1], make sure the gate
-- counts it. It does already, unless the gate was re-seeded from PostgreSQL while this
-- purchase was in flight: the seed then counted the unit as free and left the buyer out, so
-- add the buyer and take the unit now. A gate that does not exist (Redis lost its data and
-- nobody has re-seeded it yet) is left alone: its seed will read this order from PostgreSQL.
-- KEYS[1] gate stock, KEYS[2] gate buyers. Returns 1 repaired, 0 nothing to do.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
if redis.call('SADD', KEYS[2], ARGV[1]) == 1 then
  redis.call('DECR', KEYS[1])
  return 1
end
return 0
