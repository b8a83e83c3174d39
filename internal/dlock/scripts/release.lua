-- release.lua: compare-and-delete, then wake waiters if there are any.
--
-- KEYS[1] lock key; KEYS[2] the release channel's name, as a key: set by a
-- failed acquire (acquire.lua), so someone waits (same hash slot as the key)
-- ARGV[1] token
--
-- Returns 1 when the key held the token and was deleted, else 0: the lock
-- expired or someone else holds it now, and that holder is left untouched.
-- A call that go-redis sent again, after the connection broke before its reply,
-- may find the key gone or taken by its own first run: the client tells that
-- from a loss by its safe deadline (scripts.go, releaseOn).
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
-- One DEL for both keys: the lock key exists (it held the token), so 2 keys deleted means
-- the mark was set. A redis.call fewer than a DEL each: about 1 us of Redis's time a release.
if redis.call("DEL", KEYS[1], KEYS[2]) == 2 then
	redis.call("PUBLISH", KEYS[2], "released")
end
return 1
