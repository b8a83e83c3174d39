-- line: one step of a product's pre-queue (docs/api.md#the-line-before-the-start), on Redis's
-- clock. KEYS[1] the line (sorted set: user -> score). ARGV[1] user, ARGV[2] starts_at (ms),
-- ARGV[3] rate (places called a second), ARGV[4] burst (places called at the start),
-- ARGV[5] window (ms a called place stays valid), ARGV[6] 'join' or 'peek', ARGV[7] the
-- score of a place drawn before the start (a random number in [0, 1) the caller drew).
-- A user not in line joins ('join' only): before the start with the drawn score, NX, so
-- asking again never draws again; from the start on, behind every place, scored by Redis's
-- clock (ms), so in order of arrival. Scores never change and places are never removed, so
-- from the start on a place's rank never changes: rank r is called at
--   starts_at + max(0, ceil((r + 1 - burst) * 1000 / rate)),
-- or when it joined if later, and stays called for window ms; then it is expired, and the
-- places behind it are called all the same.
-- Returns {state, rank, head, called_at, called_until, now}: state 0 not in line, 1 waiting,
-- 2 called, 3 expired; rank -1 before the start (not drawn yet); times in ms.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local t0, rate, burst, window = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then
  if ARGV[6] ~= 'join' then
    return {0, -1, 0, 0, 0, now}
  end
  if now < t0 then
    score = ARGV[7]
  else
    score = now
    local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
    if last[2] and tonumber(last[2]) >= now then
      score = tonumber(last[2]) + 1 / 4096 -- exact: ms since 1970 leave 12 bits of a double
    end
  end
  redis.call('ZADD', KEYS[1], 'NX', score, ARGV[1])
end
if now < t0 then
  return {1, -1, 0, t0, 0, now}
end
local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
local head = burst + math.floor(rate * (now - t0) / 1000)
local called = t0
if rank >= burst then
  called = t0 + math.ceil((rank + 1 - burst) * 1000 / rate)
end
local s = tonumber(score)
if s >= 1 then
  called = math.max(called, math.floor(s))
end
local state = 1
if now >= called + window then
  state = 3
elseif now >= called then
  state = 2
end
return {state, rank, head, called, called + window, now}
