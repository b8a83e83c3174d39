-- acquire.lua: SET key token NX PX ttl, and mint the key's fencing token in the
-- same atomic step.
--
-- KEYS[1] lock key; KEYS[2] the release channel's name, as a key: someone waits for a
-- release; KEYS[3] fence key (all three in the same hash slot)
-- ARGV[1] token; ARGV[2] lock ttl (ms). WAIT_MARK_TTL_MS is replaced by how long the mark
-- that someone waits lasts, FENCE_KEY_TTL_MS by the fence key's expiry.
--
-- Returns the fence (an integer) when the lock was taken, or, when someone else holds it,
-- the holder's remaining ttl in ms as the only element of an array; then KEYS[2] is set,
-- so that the holder's release publishes on the channel.
--
-- scripts.go runs take.lua first, which takes a free key and mints its fence (as mint.lua's
-- mint does), then mint.lua: what is left here is a key that was not free.

local answer = again(KEYS[1], KEYS[3], ARGV[1], ARGV[2]) -- a client library retried
if answer then
	return answer
end
redis.call("SET", KEYS[2], "1", "PX", "WAIT_MARK_TTL_MS")
return {redis.call("PTTL", KEYS[1])}
