-- The first schema of seckill. The SQL files in this folder are the single source of
-- truth for the schema; the API applies them with goose at start-up (see db.Migrate).

-- +goose Up
CREATE TABLE products (
    id            BIGSERIAL   PRIMARY KEY,
    name          TEXT        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 200),
    -- stock can never go below zero, whatever the application does: the last guard.
    stock         INTEGER     NOT NULL CHECK (stock >= 0),
    initial_stock INTEGER     NOT NULL CHECK (initial_stock >= 0),
    strategy      TEXT        NOT NULL DEFAULT 'dlock'
                  CHECK (strategy IN ('dlock', 'naive', 'pessimistic', 'optimistic', 'redis')),
    -- think_ms widens the window between reading and writing stock, for teaching.
    think_ms      INTEGER     NOT NULL DEFAULT 0 CHECK (think_ms BETWEEN 0 AND 10000),
    -- fence is the highest dlock fencing token that has written this row; a writer
    -- holding an older token is rejected (see internal/dlock).
    fence         BIGINT      NOT NULL DEFAULT 0,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
    CHECK (stock <= initial_stock)
);

CREATE TABLE orders (
    id         BIGSERIAL   PRIMARY KEY,
    product_id BIGINT      NOT NULL REFERENCES products (id),
    user_id    BIGINT      NOT NULL CHECK (user_id > 0),
    created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    -- one item per user and product: the guard that holds even when every lock fails.
    CONSTRAINT orders_product_user_key UNIQUE (product_id, user_id)
);

-- +goose Down
DROP TABLE orders;
DROP TABLE products;
