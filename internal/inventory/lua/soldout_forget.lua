-- soldout_forget: SoldOut.Mark found stock in PostgreSQL after all: delete its tentative
-- mark, if it still stands. KEYS[1] the mark. ARGV[1] the token.
if redis.call('GET', KEYS[1]) == 't:' .. ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
