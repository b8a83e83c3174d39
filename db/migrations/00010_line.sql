-- A pre-queue (docs/api.md#the-line-before-the-start): a product with a start may give the
-- buyers who come before it a place, drawn at random at the start and called line_rate a
-- second, each call valid for line_window_ms. 0: no line. Its places live in Redis.

-- +goose Up
ALTER TABLE products
    ADD COLUMN line_rate      INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN line_window_ms INTEGER NOT NULL DEFAULT 0,
    ADD CONSTRAINT products_line_check CHECK (
        (line_rate = 0 AND line_window_ms = 0) OR (line_rate > 0 AND line_window_ms > 0 AND starts_at IS NOT NULL));

-- +goose Down
ALTER TABLE products DROP CONSTRAINT products_line_check, DROP COLUMN line_window_ms, DROP COLUMN line_rate;
