-- giveback: undoes admit for user ARGV[1] when its PostgreSQL write failed. Only a user that
-- is still in the buyers set gives its unit back, so a give-back runs at most once per
-- admission and never after the gate was re-seeded without that user.
-- KEYS[1] gate stock, KEYS[2] gate buyers. Returns 1 given back, 0 nothing to give back.
if redis.call('SREM', KEYS[2], ARGV[1]) == 1 then
  redis.call('INCR', KEYS[1])
  return 1
end
return 0
