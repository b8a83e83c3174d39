-- drain: PostgreSQL says the product is sold out although the gate admitted user ARGV[1]
-- (the gate was re-seeded while writes were in flight). Close the gate and drop the user.
-- KEYS[1] gate stock, KEYS[2] gate buyers.
redis.call('SREM', KEYS[2], ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('SET', KEYS[1], 0)
end
return 1
