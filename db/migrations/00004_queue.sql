-- The queue strategy (docs/strategies.md): purchases admitted in Redis onto a stream and
-- written by the API processes' consumers.

-- +goose Up
ALTER TABLE products DROP CONSTRAINT products_strategy_check;
ALTER TABLE products ADD CONSTRAINT products_strategy_check
    CHECK (strategy IN ('dlock', 'naive', 'pessimistic', 'optimistic', 'redis', 'lab', 'queue'));

-- +goose Down
DELETE FROM orders WHERE product_id IN (SELECT id FROM products WHERE strategy = 'queue');
DELETE FROM products WHERE strategy = 'queue';
ALTER TABLE products DROP CONSTRAINT products_strategy_check;
ALTER TABLE products ADD CONSTRAINT products_strategy_check
    CHECK (strategy IN ('dlock', 'naive', 'pessimistic', 'optimistic', 'redis', 'lab'));
