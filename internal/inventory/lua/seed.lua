-- seed: sets up the gate of a product from PostgreSQL, unless it exists already.
-- KEYS[1] gate stock, KEYS[2] gate buyers. ARGV[1] stock left, ARGV[2..] user ids with orders.
-- Returns 1 seeded, 0 already there.
if redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('DEL', KEYS[2])
for i = 2, #ARGV, 5000 do
  redis.call('SADD', KEYS[2], unpack(ARGV, i, math.min(i + 4999, #ARGV)))
end
redis.call('SET', KEYS[1], ARGV[1])
return 1
