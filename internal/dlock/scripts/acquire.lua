-- acquire.lua: SET key token NX PX ttl, and mint the key's fencing token in the
-- same atomic step.
--
-- KEYS[1] lock key; KEYS[2] fence key (same hash slot)
-- ARGV[1] token; ARGV[2] lock ttl (ms); ARGV[3] fence key ttl (ms)
--
-- Returns the fence as a decimal string when the lock was taken, or the
-- holder's remaining ttl in ms (an integer) when someone else holds it.
--
-- The fence is max(last fence + 1, server TIME in microseconds). The clock term
-- keeps fences increasing even when the fence key is gone (expired, evicted, or
-- Redis restarted without persistence). Microsecond timestamps (~1.8e15) are
-- exact in Lua's doubles (below 2^53), and travel as strings, never as floats.

-- Redis before 5.0 must replicate a script that calls TIME by its effects.
if redis.replicate_commands then redis.replicate_commands() end

local holder = redis.call("GET", KEYS[1])
if holder == ARGV[1] then
	-- Already ours: a client library retried a call whose reply was lost.
	-- Answer as the first call did, with the fence minted then.
	local fence = redis.call("GET", KEYS[2])
	if not fence then
		return redis.error_reply("dlock: fence key missing for a held lock")
	end
	redis.call("PEXPIRE", KEYS[1], ARGV[2])
	return fence
end
if holder then
	return redis.call("PTTL", KEYS[1])
end

local now = redis.call("TIME")
local fence = tonumber(now[1]) * 1000000 + tonumber(now[2])
local last = tonumber(redis.call("GET", KEYS[2]))
if last and last >= fence then
	fence = last + 1
end
fence = string.format("%.0f", fence)
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
redis.call("SET", KEYS[2], fence, "PX", ARGV[3])
return fence
