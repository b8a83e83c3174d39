-- rwreader.lua: a reader's release, refresh and remaining ttl (RWMutex).
--
-- KEYS[1] readers (see rwacquire.lua); KEYS[2] this release's marker, a key
-- named after the token (release.lua's; same hash slot)
-- ARGV[1] token; ARGV[2] "release", "refresh" or "pttl"; ARGV[3] the release
-- channel (release) or the new ttl in ms (refresh); ARGV[4] how long the marker
-- lasts (ms; release)
--
-- release: 1 when the reader held the lock (then the waiters are woken, and the
-- marker is left), or when its marker is there (a call retried after its reply
-- was lost, as release.lua), else 0. refresh: 1 when it held the lock, else 0.
-- pttl: its remaining ms, or -3 when it does not hold the lock.
local mine = redis.call("HGET", KEYS[1], ARGV[1])
local now = redis.call("TIME")
local nowms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local deadline = mine and tonumber(string.match(mine, "^(%d+)"))
if not mine or deadline <= nowms then
	if ARGV[2] == "pttl" then
		return -3
	end
	if ARGV[2] == "release" then
		return redis.call("EXISTS", KEYS[2])
	end
	return 0
end
if ARGV[2] == "release" then
	redis.call("HDEL", KEYS[1], ARGV[1])
	redis.call("PUBLISH", ARGV[3], "released")
	redis.call("SET", KEYS[2], "1", "PX", ARGV[4])
	return 1
end
if ARGV[2] == "refresh" then
	local ttl = tonumber(ARGV[3])
	redis.call("HSET", KEYS[1], ARGV[1], (nowms + ttl) .. ":" .. string.match(mine, ":(%d+)$"))
	if redis.call("PTTL", KEYS[1]) < ttl then
		redis.call("PEXPIRE", KEYS[1], ttl)
	end
	return 1
end
return deadline - nowms
