-- deadletter: the purchases of entries ARGV[4], ARGV[6], ... (of users ARGV[5], ARGV[7], ...)
-- could not be written: move them to the dead-letter stream with reason ARGV[2] and drop the
-- buyers from the buyers set (they may try again), in one step; when ARGV[3] is '1' their units
-- go back to the stock too (when PostgreSQL said sold out, they do not). An entry that is no
-- longer pending (another consumer claimed it, wrote it and acknowledged it) is left alone:
-- its buyer has an order.
-- KEYS[1] stream, KEYS[2] dead-letter stream, KEYS[3] stock, KEYS[4] buyers.
-- ARGV[1] consumer group. Returns the ids of the entries it dead-lettered.
local moved = {}
for i = 4, #ARGV, 2 do
  local entry, user = ARGV[i], ARGV[i + 1]
  if redis.call('XACK', KEYS[1], ARGV[1], entry) == 1 then
    redis.call('XADD', KEYS[2], '*', 'user', user, 'entry', entry, 'reason', ARGV[2])
    if redis.call('SREM', KEYS[4], user) == 1 and ARGV[3] == '1' and redis.call('EXISTS', KEYS[3]) == 1 then
      redis.call('INCR', KEYS[3])
    end
    redis.call('XDEL', KEYS[1], entry)
    moved[#moved + 1] = entry
  end
end
return moved
