-- giveback: the purchase attempt ARGV[2] of user ARGV[1] wrote nothing to PostgreSQL: give
-- its unit back. Only the admission of this very attempt is undone, so a give-back runs at
-- most once per admission, never after another attempt took the admission over, and never
-- after the gate was re-seeded without it.
-- KEYS[1] stock, KEYS[2] buyers, KEYS[3] pending. Returns 1 given back, 0 nothing to give back.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local entry = redis.call('HGET', KEYS[3], ARGV[1])
if not entry or string.match(entry, '^(.*)|%d+$') ~= ARGV[2] then
  return 0
end
redis.call('HDEL', KEYS[3], ARGV[1])
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('INCR', KEYS[1])
return 1
