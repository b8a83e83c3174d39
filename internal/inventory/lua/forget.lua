-- forget: the stream of queue product ARGV[1] was seen empty: drop it from the registry of live
-- queue products, unless it was marked within the last ARGV[2] ms (a purchase marked then may
-- still be on its way to the stream).
-- KEYS[1] the registry. Returns 1 if it dropped the product.
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then
  return 0
end
local t = redis.call('TIME')
if tonumber(score) > t[1] * 1000 + math.floor(t[2] / 1000) - tonumber(ARGV[2]) then
  return 0
end
return redis.call('ZREM', KEYS[1], ARGV[1])
