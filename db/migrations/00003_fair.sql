-- Fair products (dlock strategy): buyers are served in the order they asked, across every
-- API process (internal/dlock's ObtainFair; docs/dlock.md, "The fair lock").

-- +goose Up
ALTER TABLE products
    ADD COLUMN fair BOOLEAN NOT NULL DEFAULT false,
    ADD CONSTRAINT products_fair_check CHECK (NOT fair OR strategy = 'dlock');

-- +goose Down
ALTER TABLE products DROP CONSTRAINT products_fair_check, DROP COLUMN fair;
