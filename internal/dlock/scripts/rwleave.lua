-- rwleave.lua: a writer that gives up waiting drops its claim on the next turn.
--
-- KEYS[1] waiting writer (see rwacquire.lua); ARGV[1] token
if redis.call("GET", KEYS[1]) == ARGV[1] then
	return redis.call("DEL", KEYS[1])
end
return 0
