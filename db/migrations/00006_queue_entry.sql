-- The queue strategy's writes are idempotent per purchase (docs/strategies.md, "Queue"): an
-- order written from the queue records the id of the stream entry it was written from, in the
-- batch's own transaction, and an entry already recorded is never written again.
--
-- Before this, a batch written twice (its consumer frozen or killed between COMMIT and XACK,
-- the batch claimed by another consumer) was made one order per buyer by orders_live_key
-- alone. Since reservations, that key no longer holds across time: once the first write's
-- reservation had ended (expired, cancelled), the buyer held no live order and the second
-- write sold them a second unit, or dead-lettered the entry as sold out
-- (TestQueueBatchWrittenAgainAfterItsReservationEnded, internal/order).
--
-- An entry is one buyer's: it matches with its user. Stream ids are unique within a stream,
-- but a Redis that failed over to a replica lagging behind may issue again an id its old
-- primary issued; another buyer's purchase under that id is a purchase of its own. queue_entry
-- is NULL for every order not written from a queue.
--
-- The index is built in the migration's transaction, which blocks writes to orders while it
-- reads the table: moments on a sale's database, longer on years of orders. There, run the
-- ALTER TABLE below by hand first (instant: no default), then, outside any transaction, CREATE
-- UNIQUE INDEX CONCURRENTLY with the same definition, and check that it is valid
-- (pg_index.indisvalid: a failed concurrent build leaves an invalid index, which IF NOT EXISTS
-- would keep); the migration then finds both. Not CONCURRENTLY here: it waits for every older
-- transaction in the database, which the tests' parallel schemas would feel.

-- +goose Up
ALTER TABLE orders ADD COLUMN IF NOT EXISTS queue_entry TEXT;
CREATE UNIQUE INDEX IF NOT EXISTS orders_queue_entry_key ON orders (product_id, user_id, queue_entry) WHERE queue_entry IS NOT NULL;

-- +goose Down
DROP INDEX orders_queue_entry_key;
ALTER TABLE orders DROP COLUMN queue_entry;
