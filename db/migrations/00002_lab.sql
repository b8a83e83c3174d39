-- The oversell lab (docs/lab.md): products of strategy 'lab' are guarded by one of the lab's
-- locks alone, named in lab_lock, with a lease of lease_ms (0: the API's LOCK_TTL). Every
-- other product has lab_lock '' and lease_ms 0.

-- +goose Up
ALTER TABLE products DROP CONSTRAINT products_strategy_check;
ALTER TABLE products ADD CONSTRAINT products_strategy_check
    CHECK (strategy IN ('dlock', 'naive', 'pessimistic', 'optimistic', 'redis', 'lab'));
ALTER TABLE products
    ADD COLUMN lab_lock TEXT    NOT NULL DEFAULT '',
    ADD COLUMN lease_ms INTEGER NOT NULL DEFAULT 0 CHECK (lease_ms BETWEEN 0 AND 60000),
    ADD CONSTRAINT products_lab_lock_check CHECK ((strategy = 'lab') = (lab_lock <> '')),
    ADD CONSTRAINT products_lease_check CHECK (strategy = 'lab' OR lease_ms = 0);

-- +goose Down
ALTER TABLE products DROP CONSTRAINT products_lease_check, DROP CONSTRAINT products_lab_lock_check,
    DROP COLUMN lease_ms, DROP COLUMN lab_lock;
DELETE FROM orders WHERE product_id IN (SELECT id FROM products WHERE strategy = 'lab');
DELETE FROM products WHERE strategy = 'lab';
ALTER TABLE products DROP CONSTRAINT products_strategy_check;
ALTER TABLE products ADD CONSTRAINT products_strategy_check
    CHECK (strategy IN ('dlock', 'naive', 'pessimistic', 'optimistic', 'redis'));
