-- fairrelease.lua: release.lua for a fair lock: compare-and-delete, then wake
-- the waiter at the head of the key's queue, by its token.
--
-- KEYS[1] lock key; KEYS[2] queue (see fairacquire.lua)
-- ARGV[1] token; ARGV[2] release channel
--
-- Returns 1 when the key held the token and was deleted, else 0. The message
-- is the head waiter's token, or "released" when nobody waits: only the
-- waiter whose turn it is asks Redis, instead of every waiter at once.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
redis.call("DEL", KEYS[1])
local head = redis.call("LINDEX", KEYS[2], 0)
redis.call("PUBLISH", ARGV[2], head or "released")
return 1
