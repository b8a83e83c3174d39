-- soldout_ident: the prelude of the soldout_* scripts (see soldout.go). ident() names the
-- data set this Redis serves: its run_id (new at every start, so a restart from a snapshot or
-- a cut AOF is a new data set) and its replication id (new when a replica is promoted), and
-- says how long, in ms, this process has been up. A mark carries the ident it was made under,
-- and one made under another is never trusted again: what came back may be older than a lift.
local function ident()
  local server = redis.call('INFO', 'server')
  local repl = redis.call('INFO', 'replication')
  return string.match(server, 'run_id:(%x+)') .. '/' .. string.match(repl, 'master_replid:(%x+)'),
    tonumber(string.match(server, 'uptime_in_seconds:(%d+)')) * 1000
end
