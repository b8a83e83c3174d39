-- enqueue: the queue strategy's admission. Admits user ARGV[1] if it has not bought before and
-- a unit is left, and appends its purchase to the product's stream, in one step: there is no
-- moment at which a unit is taken and the purchase is not queued.
-- KEYS[1] stock (integer), KEYS[2] buyers (set), KEYS[3] stream, KEYS[4] the gate's stamp (see
-- stamp.lua).
-- Returns the stream entry's id when admitted, else
--    0  sold out
--   -1  admitted before (queued or written)
--   -2  gate not seeded
--   -4  sold out, in a data set the gate was not verified in: verify it, then try again
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -2
end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  return -1
end
if tonumber(redis.call('GET', KEYS[1])) <= 0 then
  local stamp = redis.call('GET', KEYS[4]) -- as in admit.lua
  if not stamp or string.find(stamp, dataset() .. '|', 1, true) ~= 1 then
    return -4
  end
  return 0
end
redis.call('DECR', KEYS[1])
redis.call('SADD', KEYS[2], ARGV[1])
return redis.call('XADD', KEYS[3], '*', 'user', ARGV[1])
