-- take.lua: acquire.lua's common case, first: the key is free. It takes the key and mints
-- the fence as mint.lua's mint does (read it there for why), inline: scripts.go puts this
-- before mint.lua, whose functions Redis would otherwise make at every call (about 0.4 us
-- of its time an acquire). A busy key goes on to acquire.lua.
--
-- KEYS and ARGV as acquire.lua. FENCE_KEY_TTL_MS is replaced by the fence key's expiry.

if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then
	local now = redis.call("TIME")
	local fence = tonumber(now[1]) * 1000000 + tonumber(now[2])
	local clock = now[1] .. string.sub("00000" .. now[2], -6)
	local last = redis.pcall("SET", KEYS[3], clock, "PX", "FENCE_KEY_TTL_MS", "GET")
	if type(last) == "table" then -- not a string (WRONGTYPE): start again from the clock
		redis.call("SET", KEYS[3], clock, "PX", "FENCE_KEY_TTL_MS")
		return fence
	end
	last = tonumber(last) -- nil when the key was gone, or held no number
	if last and last >= fence then
		fence = last + 1
		redis.call("SET", KEYS[3], string.format("%.0f", fence), "PX", "FENCE_KEY_TTL_MS")
	end
	return fence
end
