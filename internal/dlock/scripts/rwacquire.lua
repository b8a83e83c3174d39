-- rwacquire.lua: acquire.lua for a read-write lock (RWMutex): many readers or
-- one writer, and a waiting writer stops new readers, so a stream of readers
-- cannot starve it.
--
-- KEYS[1] lock key (the writer's token); KEYS[2] fence key; KEYS[3] readers
-- (hash: reader token -> "<deadline in ms of server time>:<fence>"); KEYS[4]
-- waiting writer (its token, kept while it keeps asking). All in one slot.
-- ARGV[1] token; ARGV[2] ttl (ms); ARGV[3] fence key ttl (ms); ARGV[4] "r"
-- (read) or "w" (write); ARGV[5] how long a waiting writer's claim lasts (ms).
--
-- Answers as acquire.lua does: the fence (an integer) when the lock was taken, else the
-- ms to wait at most before asking again (0: unknown) as the only element of an array.

local now = redis.call("TIME")
local nowms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ttl = tonumber(ARGV[2])

-- Readers whose lease ran out (a holder that died) are dropped.
local readers = 0
local all = redis.call("HGETALL", KEYS[3])
for i = 1, #all, 2 do
	if tonumber(string.match(all[i + 1], "^(%d+)")) <= nowms then
		redis.call("HDEL", KEYS[3], all[i])
	else
		readers = readers + 1
	end
end

local writer = redis.call("GET", KEYS[1])
if ARGV[4] == "r" then
	local mine = redis.call("HGET", KEYS[3], ARGV[1])
	if mine then -- a retried call whose reply was lost
		local fence = string.match(mine, ":(%d+)$")
		redis.call("HSET", KEYS[3], ARGV[1], (nowms + ttl) .. ":" .. fence)
		return tonumber(fence)
	end
	if writer then
		return {redis.call("PTTL", KEYS[1])}
	end
	local waiting = redis.call("PTTL", KEYS[4])
	if waiting > 0 then -- a writer waits for the readers to go: let it
		return {waiting}
	end
	local fence = mint(KEYS[2], ARGV[3], now)
	redis.call("HSET", KEYS[3], ARGV[1], (nowms + ttl) .. ":" .. decimal(fence))
	if redis.call("PTTL", KEYS[3]) < ttl then
		redis.call("PEXPIRE", KEYS[3], ttl)
	end
	return fence
end

local answer = again(KEYS[1], KEYS[2], ARGV[1], ttl) -- a retried call
if answer then
	return answer
end
if writer then
	return {redis.call("PTTL", KEYS[1])}
end
local waiting = redis.call("GET", KEYS[4])
if waiting and waiting ~= ARGV[1] then -- another writer asked first
	return {redis.call("PTTL", KEYS[4])}
end
if readers > 0 then -- claim the next turn, and wait for the readers to go
	redis.call("SET", KEYS[4], ARGV[1], "PX", ARGV[5])
	return {0}
end
if waiting then
	redis.call("DEL", KEYS[4])
end
local fence = mint(KEYS[2], ARGV[3], now)
redis.call("SET", KEYS[1], ARGV[1], "PX", ttl)
return fence
