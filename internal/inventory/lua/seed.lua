-- seed: sets the gate of a product to PostgreSQL's view: stock left and the buyers who have
-- orders. With ARGV[1] == "init" it does nothing if the gate exists (first use, or Redis lost
-- its data); with "sync" it overwrites the gate (PostgreSQL refused an admitted buyer).
-- KEYS[1] gate stock, KEYS[2] gate buyers. ARGV[2] stock left, ARGV[3..] user ids with orders.
-- Returns 1 written, 0 left as it was.
if ARGV[1] == "init" and redis.call('EXISTS', KEYS[1]) == 1 then
  return 0
end
redis.call('DEL', KEYS[2])
for i = 3, #ARGV, 5000 do
  redis.call('SADD', KEYS[2], unpack(ARGV, i, math.min(i + 4999, #ARGV)))
end
redis.call('SET', KEYS[1], ARGV[2])
return 1
