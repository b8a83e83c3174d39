-- ackhad: entries ARGV[2..n] were admitted for buyers PostgreSQL already had an order of (from
-- another entry: the gate had forgotten them, as a Redis back from older data does), so they
-- sold nothing: acknowledge and delete each, and give its unit back to the stock, once (only
-- an entry still pending gives it). The buyers stay counted: they have an order.
-- KEYS[1] stream, KEYS[2] stock. ARGV[1] consumer group. Returns the units given back.
local n = 0
for i = 2, #ARGV do
  if redis.call('XACK', KEYS[1], ARGV[1], ARGV[i]) == 1 then
    if redis.call('EXISTS', KEYS[2]) == 1 then
      redis.call('INCR', KEYS[2])
      n = n + 1
    end
    redis.call('XDEL', KEYS[1], ARGV[i])
  end
end
return n
