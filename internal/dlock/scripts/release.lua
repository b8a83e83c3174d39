-- release.lua: compare-and-delete, then wake waiters.
--
-- KEYS[1] lock key
-- ARGV[1] token; ARGV[2] release channel (same hash slot as the key)
--
-- Returns 1 when the key held the token and was deleted, else 0: the lock
-- expired or someone else holds it now, and that holder is left untouched.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call("DEL", KEYS[1])
redis.call("PUBLISH", ARGV[2], "released")
return 1
