-- acquire.lua: SET key token NX PX ttl, and mint the key's fencing token in the
-- same atomic step.
--
-- KEYS[1] lock key; KEYS[2] the release channel's name, as a key: someone waits for a
-- release; KEYS[3] fence key (all three in the same hash slot)
-- ARGV[1] token; ARGV[2] lock ttl (ms); ARGV[3] fence key ttl (ms); ARGV[4] how long
-- the mark that someone waits lasts (ms)
--
-- Returns the fence (an integer) when the lock was taken, or, when someone else holds it,
-- the holder's remaining ttl in ms as the only element of an array; then KEYS[2] is set,
-- so that the holder's release publishes on the channel.
--
-- The fence is minted by mint.lua's mint, which scripts.go prepends.

-- The key is free (the common case, taken in one command): the lock is ours.
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
	return mint(KEYS[3], ARGV[3])
end

local answer = again(KEYS[1], KEYS[3], ARGV[1], ARGV[2]) -- a client library retried
if answer then
	return answer
end
redis.call("SET", KEYS[2], "1", "PX", ARGV[4])
return {redis.call("PTTL", KEYS[1])}
