-- The merchant's controls (docs/api.md#merchants-controls): a sale may be paused (paused_at set:
-- purchases are refused until it is resumed), ended early (ends_at moved to the moment of the
-- request, never later than it was) and restocked. Each restock is a row, keyed by the
-- merchant's idempotency key, so that a retried restock adds its units once; gate_added_at
-- records when the redis and queue strategies' gate got the units (NULL: not yet; the sweeper
-- and a retry of the key drive it), as orders.gate_returned_at does for returns.

-- +goose Up
ALTER TABLE products ADD COLUMN paused_at TIMESTAMPTZ;

CREATE TABLE restocks (
    product_id    BIGINT      NOT NULL REFERENCES products (id) ON DELETE CASCADE,
    key           TEXT        NOT NULL CHECK (length(key) BETWEEN 1 AND 128),
    units         INTEGER     NOT NULL CHECK (units > 0),
    created_at    TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    gate_added_at TIMESTAMPTZ,
    PRIMARY KEY (product_id, key)
);

CREATE INDEX restocks_gate_missing ON restocks (created_at) WHERE gate_added_at IS NULL;

-- +goose Down
DROP TABLE restocks;
ALTER TABLE products DROP COLUMN paused_at;
