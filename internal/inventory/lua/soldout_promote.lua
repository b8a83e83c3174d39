-- soldout_promote: the last step of SoldOut.Mark, once PostgreSQL said the stock is 0: the
-- tentative mark 't:<token>' becomes the mark 'm:<ident>:<token>', returned, unless a lift
-- deleted it meanwhile, or marks are held, or the data set changed (nil). (A tentative value
-- restored from a snapshot finds the hold the new data set's first mark set.)
-- KEYS[1] the mark, KEYS[2] the hold, KEYS[3] the ident the product was last marked under.
-- ARGV[1] the token.
local id = ident()
if redis.call('GET', KEYS[1]) ~= 't:' .. ARGV[1] or redis.call('EXISTS', KEYS[2]) == 1
    or redis.call('GET', KEYS[3]) ~= id then
  return false
end
local v = 'm:' .. id .. ':' .. ARGV[1]
redis.call('SET', KEYS[1], v)
return v
