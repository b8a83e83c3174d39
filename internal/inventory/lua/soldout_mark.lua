-- soldout_mark: the first step of SoldOut.Mark, before PostgreSQL is asked. Returns nil when
-- marks are held (a lift, or a new data set, within the hold), the standing mark when there
-- is one, else 't' after writing the tentative mark 't:<token>', which nobody trusts before
-- soldout_promote turns it into a mark.
-- KEYS[1] the mark, KEYS[2] the hold, KEYS[3] the ident the product was last marked under.
-- ARGV[1] a token of this call, ARGV[2] the hold in ms.
local id, up = ident()
local seen = redis.call('GET', KEYS[3])
if seen ~= id then
  redis.call('SET', KEYS[3], id)
  -- another data set (restarted, older, promoted): a lift may be lost with what it forgot
  if seen or up < tonumber(ARGV[2]) then
    redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
  end
end
if redis.call('EXISTS', KEYS[2]) == 1 then
  return false
end
local v = redis.call('GET', KEYS[1])
if v and string.find(v, 'm:' .. id .. ':', 1, true) == 1 then
  return v
end
redis.call('SET', KEYS[1], 't:' .. ARGV[1])
return 't'
