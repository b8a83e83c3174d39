-- readmit: a verification of the gate (Gate.Readmit) counts again the buyers ARGV[2..n], who
-- have a live order in PostgreSQL, as bought: a data set back from older data may have
-- forgotten them, and would tell their retries sold_out. Their units are not touched: the
-- stock is what verification and PostgreSQL's sales make it.
-- ARGV[1] is the data set the caller verifies: if Redis serves another by now, nothing changes.
-- KEYS[1] stock, KEYS[2] buyers. Returns the buyers added, -1 the data set changed, -2 the
-- gate is gone.
if dataset() ~= ARGV[1] then
  return -1
end
if redis.call('EXISTS', KEYS[1]) == 0 then
  return -2
end
return redis.call('SADD', KEYS[2], unpack(ARGV, 2))
