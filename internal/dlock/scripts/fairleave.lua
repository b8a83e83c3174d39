-- fairleave.lua: a fair waiter that gives up leaves the queue at once.
--
-- KEYS[1] queue; KEYS[2] timeouts; KEYS[3] arrivals (see fairacquire.lua)
-- ARGV[1] token
--
-- Returns 1 when the token was in the queue, else 0.
redis.call("LREM", KEYS[1], 0, ARGV[1])
redis.call("HDEL", KEYS[3], ARGV[1])
return redis.call("ZREM", KEYS[2], ARGV[1])
