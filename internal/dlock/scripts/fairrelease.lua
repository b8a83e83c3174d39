-- fairrelease.lua: release.lua for a fair lock: compare-and-delete, then wake
-- the waiter at the head of the key's queue, by its token.
--
-- KEYS[1] lock key; KEYS[2] queue (see fairacquire.lua); KEYS[3] this release's
-- marker, a key named after the token (release.lua's; same hash slot)
-- ARGV[1] token; ARGV[2] release channel; ARGV[3] how long the marker lasts (ms)
--
-- Returns 1 when the key held the token and was deleted, else 0. The message
-- is the head waiter's token, or "released" when nobody waits: only the
-- waiter whose turn it is asks Redis, instead of every waiter at once. A call
-- retried after its reply was lost finds its marker and returns 1 again, as
-- release.lua does.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return redis.call("EXISTS", KEYS[3])
end
redis.call("DEL", KEYS[1])
local head = redis.call("LINDEX", KEYS[2], 0)
redis.call("PUBLISH", ARGV[2], head or "released")
redis.call("SET", KEYS[3], "1", "PX", ARGV[3])
return 1
