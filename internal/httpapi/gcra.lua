-- gcra: the rate limit checks of a batch of requests, one per key, in one call. The
-- algorithm, the key's value (the theoretical arrival time, in seconds since 2017-01-01) and
-- its expiry are those of github.com/go-redis/redis_rate's allowN with cost 1, so that API
-- processes of either kind share a budget.
-- KEYS: the limit keys. ARGV: for each key, in threes: burst, rate, period (seconds).
-- Returns, for each key in turn: 1 and "0" if the request is allowed (and spent), or 0 and
-- the seconds to wait before one would be.
local now = redis.call("TIME")
now = (now[1] - 1483228800) + (now[2] / 1000000)
local out = {}
for i, key in ipairs(KEYS) do
	local burst, rate, period = tonumber(ARGV[3 * i - 2]), tonumber(ARGV[3 * i - 1]), tonumber(ARGV[3 * i])
	local interval = period / rate
	local tat = math.max(tonumber(redis.call("GET", key) or now) or now, now)
	-- No allowed request stores an arrival time beyond now + burst intervals, so one further
	-- ahead was stored before Redis's clock stepped back (or under a larger burst): it is
	-- brought back to that bound, the budget spent, and stored so, instead of being kept as a
	-- debt the length of the step. Without a step back the bound never binds.
	local bound = now + interval * burst
	if tat > bound then
		tat = bound
		redis.call("SET", key, tat, "EX", math.ceil(bound - now))
	end
	local new_tat = tat + interval
	local diff = now - (new_tat - interval * burst)
	if diff < 0 then
		out[2 * i - 1], out[2 * i] = 0, tostring(-diff)
	else
		local reset_after = new_tat - now
		if reset_after > 0 then
			redis.call("SET", key, new_tat, "EX", math.ceil(reset_after))
		end
		out[2 * i - 1], out[2 * i] = 1, "0"
	end
end
return out
