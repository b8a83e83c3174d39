-- pttl.lua: the remaining ttl of a lock, if the token still holds it.
--
-- KEYS[1] lock key
-- ARGV[1] token
--
-- Returns the key's PTTL in ms, or -3 when the key does not hold the token.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return -3
end
return redis.call("PTTL", KEYS[1])
