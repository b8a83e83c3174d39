-- refence.lua: a new fence for a held lock, above a floor: a fence its store has seen that
-- Redis has lost, and that Redis's clock is still behind (minted by a clock that ran ahead and
-- was set right, or carried past a clock that stepped back; docs/dlock.md, "If Redis loses
-- its data").
--
-- KEYS[1] lock key; KEYS[2] fence key (same hash slot)
-- ARGV[1] token; ARGV[2] floor (decimal string); ARGV[3] fence key ttl (ms)
--
-- Returns the new fence, above the floor and every fence minted before from this data set;
-- 0 when the key does not hold the token (the lock was lost); -1 when the floor is not ahead
-- of the clock: a fence minted since this lock's (by a later holder, on another master in a
-- split brain), or one the clock has caught up with, which the next acquisition passes. It
-- changes nothing but for a new fence.
--
-- The fence is minted by mint.lua's mint, which scripts.go prepends.

if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
local now = redis.call("TIME")
local floor = tonumber(ARGV[2])
if floor < tonumber(now[1]) * 1000000 + tonumber(now[2]) then
	return -1
end
local last = tonumber(redis.call("GET", KEYS[2]))
if not last or last < floor then
	redis.call("SET", KEYS[2], ARGV[2], "PX", ARGV[3])
end
return mint(KEYS[2], ARGV[3], now)
