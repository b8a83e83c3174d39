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
-- mint(fenceKey, fenceTTL, now) mints the next fencing token of a key: the server's TIME in
-- microseconds, or one more than the last fence (fenceKey) when that is not below the clock,
-- stored back in fenceKey with a fresh expiry of fenceTTL. Redis mints far fewer than one
-- fence a microsecond, so the last fence is below the clock and the fence is the minting
-- moment in microseconds: the last one only breaks a tie, and carries a fence raised above
-- the clock (Redlock) or a clock that stepped back. That is what keeps fences increasing
-- when fenceKey is lost or stale: gone (never used, expired fenceTTL after its last use,
-- evicted, lost in a restart without persistence) or older than the last fence given out (a
-- replica that missed the last writes promoted, a restart from an older RDB snapshot, AOF
-- everysec's unsynced last second lost). The clock now is past every fence minted before
-- the loss, as long as the clock that mints now is not behind the clock that minted the
-- last fence by more than the time between the two mints (docs/dlock.md, "the margin").
-- now is TIME's reply, or nil to call TIME here. Microsecond timestamps (~1.8e15) are exact
-- in Lua's doubles (below 2^53). Returns the fence as a number: a script that returns it
-- sends an integer reply, exact (Redis converts the double to a 64-bit integer), and
-- cheaper than a string: string.format took about 1.5 us of Redis's time an acquire.
-- Where a fence goes into a string, decimal writes it (".." would write 1.8e+15).
local function decimal(n)
	return string.format("%.0f", n)
end

local function mint(fenceKey, fenceTTL, now)
	now = now or redis.call("TIME")
	local fence = tonumber(now[1]) * 1000000 + tonumber(now[2])
	-- TIME's fence written as seconds and six digits of microseconds, cheaper than decimal.
	local clock = now[1] .. string.sub("00000" .. now[2], -6)
	-- One command in the common case: write the clock, read the last fence.
	local last = redis.pcall("SET", fenceKey, clock, "PX", fenceTTL, "GET")
	if type(last) == "table" then -- not a string (WRONGTYPE): start again from the clock
		redis.call("SET", fenceKey, clock, "PX", fenceTTL)
		return fence
	end
	last = tonumber(last) -- nil when the key was gone, or held no number
	if last and last >= fence then
		fence = last + 1
		redis.call("SET", fenceKey, decimal(fence), "PX", fenceTTL)
	end
	return fence
end
