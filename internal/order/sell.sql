-- sell: one batch of buyers (dlock strategy: under the product lock; redis strategy: admitted by
-- the gate, fence 0). It runs in the batch's transaction right
-- after the statement that locked the product row (FOR UPDATE), so its snapshot, taken once
-- that lock was granted, sees every order committed while the batch waited for it, and the
-- stock cannot change until COMMIT.
-- Parameters: id, the product; fence, the holder's fencing token (0: no lock, the redis and
-- queue strategies, whose products no lock fences); users, the buyers in
-- arrival order (may repeat); entries, NULL, or (queue strategy) the stream entry of each
-- request in users, recorded on the order written for it (00006_queue_entry.sql).
-- Sells one unit to each distinct buyer without an order, in arrival order, while stock
-- lasts, only if the fence is above every fence that has written the product (a grant writes
-- once: an equal fence is another grant's, docs/dlock.md); a request whose entry was written
-- before (a batch written again) is answered with that order, whatever became of it since,
-- and sells nothing. Rows returned:
--   'o' user_id id created_at status pay_by           an order written now
--   'a' user_id id created_at status pay_by paid_at   a buyer who already had a live order
--                                                      (pending or paid), and that order
--   'w' user_id id created_at status pay_by paid_at   an entry written before, its order, and
--       ... ord                                        its request's place in users (from 1)
--   's' left                    stock left; NULL when nothing was written because a fence
--                               at least as large has written the product
-- An order's status and pay_by come from the product's payment window (the trigger of
-- 00005_reservations.sql); a buyer whose earlier reservation ended buys again.
-- Its cost must not grow with the product's orders: `had` and `done` look each buyer up in an
-- index that leads with (product_id, user_id), one probe per buyer, on any plan. pgx prepares the statement once
-- per connection and PostgreSQL soon keeps one generic plan for it, made from the statistics of
-- when the sale began, which may say the orders table is empty (or never say what share of it
-- one product is). On such a plan a plain join read every order of the product once per batch,
-- 7.4 million rows in a 12-second sale of 41,000 orders; LATERAL ... LIMIT 1 keeps the lookup a
-- probe per buyer, and the caller's SET LOCAL enable_seqscan = off keeps that probe in the
-- index when the statistics say the table is empty (TestSellPlanProbesPerBuyer).
WITH p AS (
    SELECT stock FROM products WHERE id = @id AND (fence < @fence OR fence = 0 AND @fence = 0)
), t AS (
    SELECT u, e, ord FROM unnest(CAST(@users AS bigint[]), CAST(@entries AS text[])) WITH ORDINALITY AS t(u, e, ord)
), done AS (
    SELECT t.ord, t.u, o.id, o.created_at, o.status, o.pay_by, o.paid_at FROM t
    CROSS JOIN LATERAL (SELECT id, created_at, status, pay_by, paid_at FROM orders
        WHERE product_id = @id AND user_id = t.u AND queue_entry = t.e LIMIT 1) o
    WHERE t.e IS NOT NULL -- no lookup for the batches of the other strategies
), req AS (
    SELECT DISTINCT ON (u) u, e, ord FROM t WHERE ord NOT IN (SELECT ord FROM done) ORDER BY u, ord
), had AS (
    SELECT r.u, o.id, o.created_at, o.status, o.pay_by, o.paid_at FROM req r
    CROSS JOIN LATERAL (SELECT id, created_at, status, pay_by, paid_at FROM orders
        WHERE product_id = @id AND user_id = r.u AND status IN ('pending', 'paid') LIMIT 1) o
), fresh AS (
    SELECT u, e, ord FROM req WHERE u NOT IN (SELECT u FROM had)
    ORDER BY ord LIMIT (SELECT coalesce(max(stock), 0) FROM p)
), ins AS (
    INSERT INTO orders (product_id, user_id, queue_entry)
    SELECT @id, u, e FROM fresh ORDER BY ord
    ON CONFLICT (product_id, user_id) WHERE status IN ('pending', 'paid') DO NOTHING
    RETURNING id, user_id, created_at, status, pay_by
), upd AS (
    UPDATE products SET stock = stock - (SELECT count(*) FROM ins), fence = @fence, updated_at = now()
    WHERE id = @id AND EXISTS (SELECT FROM p)
    RETURNING stock
)
SELECT 'o' AS kind, user_id, id, created_at, status, pay_by, NULL::timestamptz AS paid_at, NULL::integer AS stock,
    NULL::bigint AS ord FROM ins
UNION ALL SELECT 'a', u, id, created_at, status, pay_by, paid_at, NULL, NULL FROM had
UNION ALL SELECT 'w', u, id, created_at, status, pay_by, paid_at, NULL, ord FROM done
UNION ALL SELECT 's', NULL, NULL, NULL, NULL, NULL, NULL, (SELECT stock FROM upd), NULL
