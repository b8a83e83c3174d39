-- fairacquire.lua: acquire.lua for a fair lock: waiters are granted the key in
-- the order they first asked for it, across every client.
--
-- KEYS[1] lock key; KEYS[2] fence key; KEYS[3] queue (list of waiting tokens,
-- oldest first); KEYS[4] timeouts (sorted set: token -> ms of server time after
-- which a waiter that has not asked again is dropped); KEYS[5] arrivals (hash:
-- token -> ms of server time when it started waiting). All in one hash slot.
-- ARGV[1] token; ARGV[2] lock ttl (ms); ARGV[3] fence key ttl (ms);
-- ARGV[4] queue timeout (ms): how long a waiter keeps its place between calls.
--
-- Returns "<fence>|<server ms now>|<server ms when the next waiter started
-- waiting, or empty>" when the lock was taken (a retried call: the fence
-- alone), or else the holder's remaining ttl in ms, or 0 when the key is free
-- but another waiter is ahead (an integer).

local now = redis.call("TIME")
local nowms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)

-- Drop the waiters at the head of the queue that stopped asking: a process that
-- died, or lost its connection, never blocks the ones behind it for longer
-- than the queue timeout.
while true do
	local first = redis.call("LINDEX", KEYS[3], 0)
	if not first then break end
	local deadline = redis.call("ZSCORE", KEYS[4], first)
	if deadline and tonumber(deadline) > nowms then break end
	redis.call("LPOP", KEYS[3])
	redis.call("ZREM", KEYS[4], first)
	redis.call("HDEL", KEYS[5], first)
end

local answer = again(KEYS[1], KEYS[2], ARGV[1], ARGV[2]) -- a retried call
if answer then
	return type(answer) == "number" and decimal(answer) or answer
end
local holder = redis.call("GET", KEYS[1])

local first = redis.call("LINDEX", KEYS[3], 0)
if not holder and (not first or first == ARGV[1]) then
	if first then
		redis.call("LPOP", KEYS[3])
		redis.call("ZREM", KEYS[4], ARGV[1])
		redis.call("HDEL", KEYS[5], ARGV[1])
	end
	local fence = mint(KEYS[2], ARGV[3], now)
	redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
	local nextWaiter = redis.call("LINDEX", KEYS[3], 0)
	local since = nextWaiter and redis.call("HGET", KEYS[5], nextWaiter) or ""
	return decimal(fence) .. "|" .. nowms .. "|" .. since
end

-- Wait: take a place at the end of the queue on the first call, keep it on
-- the next ones. The queue and its timeouts expire when nobody asks any more.
if not redis.call("ZSCORE", KEYS[4], ARGV[1]) then
	redis.call("RPUSH", KEYS[3], ARGV[1])
	redis.call("HSET", KEYS[5], ARGV[1], nowms)
end
redis.call("ZADD", KEYS[4], nowms + tonumber(ARGV[4]), ARGV[1])
local keep = tonumber(ARGV[4]) * 2 + tonumber(ARGV[2])
redis.call("PEXPIRE", KEYS[3], keep)
redis.call("PEXPIRE", KEYS[4], keep)
redis.call("PEXPIRE", KEYS[5], keep)
if holder then
	return redis.call("PTTL", KEYS[1])
end
return 0
