-- release.lua: compare-and-delete, then wake waiters if there are any.
--
-- KEYS[1] lock key; KEYS[2] the release channel's name, as a key: set by a
-- failed acquire (acquire.lua), so someone waits (same hash slot as the key);
-- KEYS[3] this release's marker, a key named after the token (same hash slot)
-- ARGV[1] token; ARGV[2] how long the marker lasts (ms)
--
-- Returns 1 when the key held the token and was deleted, else 0: the lock
-- expired or someone else holds it now, and that holder is left untouched.
-- A retried call, whose first reply was lost after it deleted the key, finds
-- its marker and returns 1 again: the key's absence, or another holder, is
-- then its own doing, not a loss. (Only the marker tells the two apart: an
-- absent key looks the same whether it was deleted or expired.)
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return redis.call("EXISTS", KEYS[3])
end
-- One DEL for both keys: the lock key exists (it held the token), so 2 keys deleted means
-- the mark was set. A redis.call fewer than a DEL each: about 1 us of Redis's time a release.
if redis.call("DEL", KEYS[1], KEYS[2]) == 2 then
	redis.call("PUBLISH", KEYS[2], "released")
end
redis.call("SET", KEYS[3], "1", "PX", ARGV[2])
return 1
