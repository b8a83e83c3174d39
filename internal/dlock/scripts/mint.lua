-- mint.lua: the prelude of every acquire script (scripts.go prepends it).
--
-- again(lockKey, fenceKey, token, ttl) answers a retried acquire call, one
-- whose first reply was lost, when lockKey holds token already: it renews the
-- key and returns the fence minted then (an error reply if that is gone), as
-- the first call answered. Otherwise it returns nil.
local function again(lockKey, fenceKey, token, ttl)
	if redis.call("GET", lockKey) ~= token then
		return nil
	end
	local fence = redis.call("GET", fenceKey)
	if not fence then
		return redis.error_reply("dlock: fence key missing for a held lock")
	end
	redis.call("PEXPIRE", lockKey, ttl)
	return fence
end
--
-- mint(now, fenceKey, fenceTTL) mints the next fencing token of a key and stores
-- it: max(last fence + 1, server TIME in microseconds), so that fences keep
-- increasing even when the fence key is gone (expired, evicted, or Redis
-- restarted without persistence). now is the reply of TIME. Microsecond
-- timestamps (~1.8e15) are exact in Lua's doubles (below 2^53), and travel as
-- strings, never as floats. Returns the fence as a decimal string.
local function mint(now, fenceKey, fenceTTL)
	local fence = tonumber(now[1]) * 1000000 + tonumber(now[2])
	local last = tonumber(redis.call("GET", fenceKey))
	if last and last >= fence then
		fence = last + 1
	end
	fence = string.format("%.0f", fence)
	redis.call("SET", fenceKey, fence, "PX", fenceTTL)
	return fence
end

