-- dataset: the prelude of the gate's scripts that need it. dataset() names the Redis data set
-- this server serves: its replication id, which a master draws anew whenever it starts (empty,
-- from a snapshot, from an AOF) and a replica draws anew when it is promoted. So a data set
-- that may have lost writes Redis acknowledged never goes by the name of the one it lost them
-- from. (INFO replication is the cheapest section that names it: a few microseconds.)
local function dataset()
  return string.match(redis.call('INFO', 'replication'), 'master_replid:(%x+)')
end
