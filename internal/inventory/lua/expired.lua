-- expired: lists up to ARGV[1] admissions whose time ran out without PostgreSQL's answer
-- reaching the gate (the process died, or lost Redis, between admission and confirmation).
-- KEYS[1] pending. Returns a flat list: user, token, user, token, ...
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local out = {}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local token, deadline = string.match(all[i + 1], '^(.*)|(%d+)$')
  if tonumber(deadline) <= now then
    out[#out + 1] = all[i]
    out[#out + 1] = token
    if #out >= 2 * tonumber(ARGV[1]) then
      break
    end
  end
end
return out
