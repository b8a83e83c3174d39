-- raisefence.lua: raise a key's fence to at least a given value (Redlock).
--
-- KEYS[1] fence key
-- ARGV[1] fence (decimal string); ARGV[2] fence key ttl (ms)
--
-- A Redlock acquisition takes the largest fence its majority minted and raises
-- the other granting nodes to it, so that every later majority, which shares a
-- node with this one, mints a larger fence whatever the nodes' clocks say.
-- Returns 1.
local cur = tonumber(redis.call("GET", KEYS[1]))
if cur and cur >= tonumber(ARGV[1]) then
	redis.call("PEXPIRE", KEYS[1], ARGV[2])
	return 1
end
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
return 1
