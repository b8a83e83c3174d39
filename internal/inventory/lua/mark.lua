-- mark: queue product ARGV[1] may have purchases in its stream from now on: record it in the
-- registry of live queue products with Redis's time (ms), so that every process's sweep
-- (Queue.Backlogged) looks at its stream until it has been empty for the grace period.
-- KEYS[1] the registry (sorted set: product id -> ms of its last mark).
local t = redis.call('TIME')
return redis.call('ZADD', KEYS[1], t[1] * 1000 + math.floor(t[2] / 1000), ARGV[1])
