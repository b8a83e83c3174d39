-- mint.lua: the prelude of every acquire script (scripts.go prepends it).
--
-- again(lockKey, fenceKey, token, ttl) answers a retried acquire call, one
-- whose first reply was lost, when lockKey holds token already: it renews the
-- key and returns the fence minted then, a number (an error reply if that is
-- gone), as the first call answered. Otherwise it returns nil.
local function again(lockKey, fenceKey, token, ttl)
	if redis.call("GET", lockKey) ~= token then
		return nil
	end
	local fence = tonumber(redis.call("GET", fenceKey))
	if not fence then
		return redis.error_reply("dlock: fence key missing or unreadable for a held lock")
	end
	redis.call("PEXPIRE", lockKey, ttl)
	return fence
end
--
-- mint(fenceKey, fenceTTL, now) mints the next fencing token of a key: one more than the
-- last, counted in fenceKey (INCR keeps the key's expiry). A fenceKey that is gone (never
-- used, expired fenceTTL after it was started, evicted, or lost in a Redis restart without
-- persistence) or unreadable starts again from the server's TIME in microseconds, and
-- expires fenceTTL later. That keeps fences increasing across the loss: each fence counted
-- since a start is below the server clock at the time it was minted, since Redis mints far
-- fewer than one a microsecond, so the clock is past every fence given out. now is TIME's
-- reply, or nil to call TIME only when starting. Microsecond timestamps (~1.8e15) are exact
-- in Lua's doubles (below 2^53). Returns the fence as a number: a script that returns it
-- sends an integer reply, exact (Redis converts the double to a 64-bit integer), and
-- cheaper than a string: string.format took about 1.5 us of Redis's time an acquire.
-- Where a fence goes into a string, decimal writes it (".." would write 1.8e+15).
local function decimal(n)
	return string.format("%.0f", n)
end

local function mint(fenceKey, fenceTTL, now)
	local fence = redis.pcall("INCR", fenceKey)
	if type(fence) ~= "number" or fence <= 1 then
		now = now or redis.call("TIME")
		fence = tonumber(now[1]) * 1000000 + tonumber(now[2])
		redis.call("SET", fenceKey, decimal(fence), "PX", fenceTTL)
	end
	return fence
end
