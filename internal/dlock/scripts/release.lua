-- release.lua: compare-and-delete, then wake waiters if there are any.
--
-- KEYS[1] lock key; KEYS[2] the release channel's name, as a key: set by a
-- failed acquire (acquire.lua), so someone waits (same hash slot as the key)
-- ARGV[1] token
--
-- Returns 1 when the key held the token and was deleted, else 0: the lock
-- expired or someone else holds it now, and that holder is left untouched.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call("DEL", KEYS[1])
if redis.call("DEL", KEYS[2]) == 1 then
	redis.call("PUBLISH", KEYS[2], "released")
end
return 1
