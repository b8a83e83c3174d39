-- settle: the probe that waits for a transaction whose COMMIT got no answer to end. It tries
-- to insert the orders that transaction inserted, in a transaction of its own that is then
-- rolled back. Where the other transaction's uncommitted order holds the unique key
-- (product_id, user_id) of live orders, PostgreSQL makes this insert wait until that transaction commits or
-- rolls back (which it does when its COMMIT arrives or its connection closes), so the
-- statement after this one sees the final outcome.
-- Parameters: id, the product; users, the buyers whose orders were inserted, as an array
-- literal.
INSERT INTO orders (product_id, user_id)
SELECT @id, u FROM unnest(CAST(@users AS bigint[])) AS t(u)
ON CONFLICT (product_id, user_id) WHERE status IN ('pending', 'paid') DO NOTHING
