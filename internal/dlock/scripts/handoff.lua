-- handoff.lua: lock cohorting. The holder of a key passes it to a goroutine of the same
-- Client that waits for it: if the key still holds the holder's token, it now holds the
-- waiter's, with a fresh ttl, and the waiter's fence is minted, all in one step. One call
-- instead of a release and an acquire; nobody else is woken.
--
-- KEYS[1] lock key; KEYS[3] fence key (same hash slot; the keys of acquire.lua, whose
-- KEYS[2] this script leaves alone)
-- ARGV[1] holder's token; ARGV[2] waiter's token; ARGV[3] lock ttl (ms);
-- ARGV[4] fence key ttl (ms)
--
-- Returns the waiter's fence (an integer), or 0 when the key holds neither token (expired,
-- or someone else holds it): the holder had lost it. A retried call, whose first reply was
-- lost, finds the waiter's token there: it renews the key and returns the fence minted then,
-- as acquire.lua's again does, so the waiter gets the lock and the holder no false loss.
--
-- The fence is minted by mint.lua's mint, which scripts.go prepends.

if redis.call("GET", KEYS[1]) ~= ARGV[1] then
	return again(KEYS[1], KEYS[3], ARGV[2], ARGV[3]) or 0
end
redis.call("SET", KEYS[1], ARGV[2], "PX", ARGV[3])
return mint(KEYS[3], ARGV[4])
