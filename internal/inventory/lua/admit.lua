-- admit: the redis strategy's gate. Admits user ARGV[1] for this purchase attempt (token
-- ARGV[2]) if it has not bought before and a unit is left, atomically, and records the
-- admission as pending for ARGV[3] ms: until PostgreSQL confirms it (confirm.lua), gives it
-- back (giveback.lua), or it expires and the sold-out path reconciles it with PostgreSQL.
-- KEYS[1] stock (integer), KEYS[2] buyers (set), KEYS[3] pending (hash user -> token|deadline),
-- KEYS[4] the gate's stamp (see stamp.lua).
-- Returns
--    1  admitted; also when this very attempt was admitted before (a retried call)
--    0  sold out
--    2  sold out, but an admission of another buyer has expired: reconcile, then try again
--    3  no unit left, but admissions of other buyers are pending: a unit may come back
--   -1  bought before (confirmed)
--   -2  gate not seeded
--   -3  another attempt of this user is in flight
--   -4  sold out, in a data set the gate was not verified in: verify it, then try again
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -2
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local reservation = ARGV[2] .. '|' .. (now + tonumber(ARGV[3]))
local entry = redis.call('HGET', KEYS[3], ARGV[1])
if entry then
  local token, deadline = string.match(entry, '^(.*)|(%d+)$')
  if token == ARGV[2] then
    return 1
  end
  if tonumber(deadline) > now then
    return -3
  end
  -- An earlier attempt of this user ran out of time: this one takes over its unit.
  redis.call('HSET', KEYS[3], ARGV[1], reservation)
  return 1
end
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then
  return -1
end
if tonumber(redis.call('GET', KEYS[1])) <= 0 then
  local pending = redis.call('HVALS', KEYS[3])
  for _, v in ipairs(pending) do
    if tonumber(string.match(v, '|(%d+)$')) <= now then
      return 2
    end
  end
  -- Sold out only once every admitted purchase has ended: a pending one may write nothing
  -- and give its unit back, which a buyer told sold_out now would never see.
  if #pending > 0 then
    return 3
  end
  -- Sold out only if this is the data set the gate last agreed with PostgreSQL in: one that
  -- came back older (a snapshot, a cut AOF, a promoted replica) may have lost units returned.
  local stamp = redis.call('GET', KEYS[4])
  if not stamp or string.find(stamp, dataset() .. '|', 1, true) ~= 1 then
    return -4
  end
  return 0
end
redis.call('DECR', KEYS[1])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], reservation)
return 1
