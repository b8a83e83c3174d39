-- acquire.lua: SET key token NX PX ttl, and mint the key's fencing token in the
-- same atomic step.
--
-- KEYS[1] lock key; KEYS[2] fence key (same hash slot)
-- ARGV[1] token; ARGV[2] lock ttl (ms); ARGV[3] fence key ttl (ms)
--
-- Returns the fence as a decimal string when the lock was taken, or the
-- holder's remaining ttl in ms (an integer) when someone else holds it.
--
-- The fence is minted by mint.lua's mint, which scripts.go prepends.

-- Redis before 5.0 must replicate a script that calls TIME by its effects.
if redis.replicate_commands then redis.replicate_commands() end

-- The key is free (the common case, taken in one command): the lock is ours.
if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
	return mint(redis.call("TIME"), KEYS[2], ARGV[3])
end

local answer = again(KEYS[1], KEYS[2], ARGV[1], ARGV[2]) -- a client library retried
if answer then
	return answer
end
return redis.call("PTTL", KEYS[1])
