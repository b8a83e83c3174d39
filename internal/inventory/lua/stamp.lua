-- stamp: ends a verification of the gate (Gate.Stamp). Records that the gate agrees with
-- PostgreSQL's read at ARGV[2] (ms of PostgreSQL's clock) in the data set ARGV[1]: every
-- return recorded in PostgreSQL (gate_returned_at) before that time, less a slack, is counted
-- in it. Admissions then trust the gate's sold out in this data set (admit.lua,
-- enqueue.lua). Nothing is written if Redis serves another data set by now, or the gate is
-- gone.
-- KEYS[1] stock, KEYS[2] the stamp (Keys.GateStamp).
-- Returns 1 stamped, 0 the gate is gone, -1 the data set changed.
if dataset() ~= ARGV[1] then
  return -1
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('SET', KEYS[2], ARGV[1] .. '|' .. ARGV[2])
return 1
