-- mint.lua: the prelude of every acquire script (scripts.go prepends it).
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

