-- admit: the redis strategy's gate. Admits user ARGV[1] if it has not been admitted before
-- and a unit is left, atomically.
-- KEYS[1] gate stock (integer), KEYS[2] gate buyers (set). Same hash slot.
-- Returns 1 admitted, 0 sold out, -1 already admitted, -2 gate not seeded.
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  return -1
end
local stock = redis.call('GET', KEYS[1])
if not stock then
  return -2
end
if tonumber(stock) <= 0 then
  return 0
end
redis.call('DECR', KEYS[1])
redis.call('SADD', KEYS[2], ARGV[1])
return 1
