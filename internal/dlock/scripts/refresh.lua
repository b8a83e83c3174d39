-- refresh.lua: compare-and-pexpire.
--
-- KEYS[1] lock key
-- ARGV[1] token; ARGV[2] new ttl (ms)
--
-- Returns 1 when the key held the token and its ttl was set, else 0.
if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return 0
end
return redis.call("PEXPIRE", KEYS[1], ARGV[2])
