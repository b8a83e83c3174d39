-- soldout_lift: SoldOut.Lift's step in Redis. Deletes the mark, and holds marks off for
-- ARGV[2] ms. Returns the hold's id: ARGV[1] for a new hold, or the id of the hold that has
-- stood since the last mark was deleted (no mark stood since: whoever waited a lease after
-- that hold began need not wait again); '' when no mark can have been trusted for a lease:
-- none stood in this data set since a hold that ended, and the product was marked in this
-- data set, or never in it and the data set is older than the hold (copies of marks of an
-- earlier one expired long ago).
-- KEYS[1] the mark, KEYS[2] the hold, KEYS[3] the ident the product was last marked under.
local id, up = ident()
local had = redis.call('DEL', KEYS[1])
local h = redis.call('GET', KEYS[2])
local seen = redis.call('GET', KEYS[3])
local quiet = had == 0 and not h and (seen == id or (not seen and up >= tonumber(ARGV[2])))
if had == 1 or not h then
  h = ARGV[1]
end
redis.call('SET', KEYS[2], h, 'PX', ARGV[2])
if quiet then
  return ''
end
return h
