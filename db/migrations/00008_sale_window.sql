-- A sale window (docs/api.md#the-sale-window): a product may be on sale from starts_at and until
-- ends_at, each optional (NULL: from its creation; until it is sold out). The API decides from
-- its cached copy of the product, with its own clock, so the window never changes once set.

-- +goose Up
ALTER TABLE products
    ADD COLUMN starts_at TIMESTAMPTZ,
    ADD COLUMN ends_at   TIMESTAMPTZ,
    ADD CONSTRAINT products_window_check CHECK (starts_at IS NULL OR ends_at IS NULL OR ends_at > starts_at);

-- +goose Down
ALTER TABLE products DROP CONSTRAINT products_window_check, DROP COLUMN ends_at, DROP COLUMN starts_at;
