-- soldout_check: whether the mark is the value ARGV[1], made under this data set (1), or
-- not (0). With ARGV[1] empty, returns the mark standing under this data set, if any (nil).
-- KEYS[1] the mark.
local v = redis.call('GET', KEYS[1])
if not v or string.find(v, 'm:' .. ident() .. ':', 1, true) ~= 1 then
  v = false
end
if ARGV[1] == '' then
  return v
end
if v == ARGV[1] then
  return 1
end
return 0
