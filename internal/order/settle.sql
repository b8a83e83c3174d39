-- settle: the probe that waits for a transaction whose COMMIT got no answer to end. It tries
-- to insert the orders that transaction inserted, in a transaction of its own that is then
-- rolled back. Where the other transaction's uncommitted order holds the unique key
-- (product_id, user_id) of live orders, PostgreSQL makes this insert wait until that transaction commits or
-- rolls back (which it does when its COMMIT arrives or its connection closes), so the
-- statement after this one sees the final outcome.
-- Parameters: id, the product; users, the buyers whose orders were inserted, as an array
-- literal. It returns the ids of the orders it inserted itself: after a failover the new
-- primary may hand out again the ids the old one handed out last (a sequence's state
-- reaches the standby in the WAL the old primary may not have sent), so the probe's own
-- order may have the very id of the order it looks for (settleOnce leaves them out).
INSERT INTO orders (product_id, user_id)
SELECT @id, u FROM unnest(CAST(@users AS bigint[])) AS t(u)
ON CONFLICT (product_id, user_id) WHERE status IN ('pending', 'paid') DO NOTHING
RETURNING id
