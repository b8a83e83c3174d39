-- ack: the purchases of entries ARGV[2..n] are settled in PostgreSQL (written, or the buyer
-- had an order): acknowledge them to consumer group ARGV[1] and delete them from the stream,
-- so that the stream holds only what is still to be written.
-- KEYS[1] stream.
redis.call('XACK', KEYS[1], ARGV[1], unpack(ARGV, 2))
return redis.call('XDEL', KEYS[1], unpack(ARGV, 2))
