-- Reservations (docs/strategies.md, "Reservations"): a product may give its buyers a payment
-- window, pay_within_ms. Its orders are then created 'pending' with a pay_by time, and end
-- 'paid' (paid in time), 'expired' (not paid by pay_by: its unit went back to stock) or
-- 'cancelled' (cancelled before pay_by: its unit went back). An order of a product without a
-- window is 'paid' from the start, with no pay_by.
--
-- PostgreSQL's clock is the one clock of a reservation: pay_by is set here, at insert, and
-- every transition compares it with clock_timestamp(). The constraints make the impossible
-- states unrepresentable: a window-less order is paid and never pending; pay_by is set
-- exactly when the order is or was pending; paid_at exactly when a pending order was paid, and
-- only before pay_by; ended_at exactly when the order expired (at or after pay_by) or was
-- cancelled (before pay_by); a final status never changes again (the trigger below).
--
-- Uniqueness covers the live orders ('pending' or 'paid') only: a buyer whose reservation
-- ended may buy again. Every ON CONFLICT (product_id, user_id) names the index's predicate.
--
-- gate_returned_at is the outbox of the redis and queue strategies' Redis gate: NULL while an
-- ended order's unit has not been given back to the gate yet (the sweeper re-drives those);
-- set in the same transaction as ended_at for the other strategies.

-- +goose Up
ALTER TABLE products
    ADD COLUMN pay_within_ms INTEGER NOT NULL DEFAULT 0 CHECK (pay_within_ms BETWEEN 0 AND 86400000),
    -- naive and the lab write absolute stock values: a unit given back would be a lost update.
    ADD CONSTRAINT products_pay_within_check
        CHECK (pay_within_ms = 0 OR strategy IN ('dlock', 'pessimistic', 'optimistic', 'redis', 'queue'));

ALTER TABLE orders
    ADD COLUMN status TEXT NOT NULL DEFAULT 'paid'
        CHECK (status IN ('paid', 'pending', 'expired', 'cancelled')),
    ADD COLUMN pay_by           TIMESTAMPTZ,
    ADD COLUMN paid_at          TIMESTAMPTZ,
    ADD COLUMN ended_at         TIMESTAMPTZ,
    ADD COLUMN gate_returned_at TIMESTAMPTZ,
    ADD CONSTRAINT orders_pay_by_check CHECK (status = 'paid' OR pay_by IS NOT NULL),
    ADD CONSTRAINT orders_pay_by_after_check CHECK (pay_by IS NULL OR pay_by > created_at),
    ADD CONSTRAINT orders_paid_at_check
        CHECK ((paid_at IS NOT NULL) = (status = 'paid' AND pay_by IS NOT NULL)),
    ADD CONSTRAINT orders_paid_in_time_check CHECK (paid_at IS NULL OR paid_at < pay_by),
    ADD CONSTRAINT orders_ended_at_check
        CHECK ((ended_at IS NOT NULL) = (status IN ('expired', 'cancelled'))),
    ADD CONSTRAINT orders_expired_late_check CHECK (status <> 'expired' OR ended_at >= pay_by),
    ADD CONSTRAINT orders_cancelled_early_check CHECK (status <> 'cancelled' OR ended_at < pay_by),
    ADD CONSTRAINT orders_gate_returned_check
        CHECK (gate_returned_at IS NULL OR (ended_at IS NOT NULL AND gate_returned_at >= ended_at));

ALTER TABLE orders DROP CONSTRAINT orders_product_user_key;
-- One live order per user and product: the guard that holds even when every lock fails.
CREATE UNIQUE INDEX orders_live_key ON orders (product_id, user_id) WHERE status IN ('pending', 'paid');
-- The ended orders, for the lookup's "else the latest" and the audits.
CREATE INDEX orders_ended_idx ON orders (product_id, user_id, id) WHERE status IN ('expired', 'cancelled');
-- The sweeper's work: pending orders by deadline, and ended ones the gate has not taken back.
CREATE INDEX orders_pending_pay_by_idx ON orders (pay_by) WHERE status = 'pending';
CREATE INDEX orders_gate_return_idx ON orders (id)
    WHERE gate_returned_at IS NULL AND status IN ('expired', 'cancelled');

-- +goose StatementBegin
-- orders_reservation: an order's first status comes from its product (pending with pay_by =
-- clock_timestamp() + pay_within_ms, or paid), whatever the INSERT says; a final status (paid, expired,
-- cancelled) never changes.
CREATE FUNCTION orders_reservation() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    w INTEGER;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT pay_within_ms INTO w FROM products WHERE id = NEW.product_id;
        IF coalesce(w, 0) > 0 THEN
            NEW.status := 'pending';
            -- From the moment of the insert, not the transaction's start (created_at): a
            -- purchase that queued for the product's row lock still gets its whole window.
            NEW.pay_by := clock_timestamp() + w * interval '1 millisecond';
        ELSE
            NEW.status := 'paid';
            NEW.pay_by := NULL;
        END IF;
        NEW.paid_at := NULL;
        NEW.ended_at := NULL;
        NEW.gate_returned_at := NULL;
        RETURN NEW;
    END IF;
    IF NEW.status <> OLD.status AND OLD.status <> 'pending' THEN
        RAISE EXCEPTION 'orders_final_status: order % is %, a final status', OLD.id, OLD.status
            USING ERRCODE = 'check_violation', CONSTRAINT = 'orders_final_status';
    END IF;
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER orders_reservation BEFORE INSERT OR UPDATE OF status ON orders
    FOR EACH ROW EXECUTE FUNCTION orders_reservation();

-- +goose Down
DROP TRIGGER orders_reservation ON orders;
DROP FUNCTION orders_reservation();
DELETE FROM orders WHERE status IN ('expired', 'cancelled');
DROP INDEX orders_gate_return_idx, orders_pending_pay_by_idx, orders_ended_idx, orders_live_key;
ALTER TABLE orders ADD CONSTRAINT orders_product_user_key UNIQUE (product_id, user_id);
ALTER TABLE orders DROP COLUMN gate_returned_at, DROP COLUMN ended_at, DROP COLUMN paid_at,
    DROP COLUMN pay_by, DROP COLUMN status;
ALTER TABLE products DROP CONSTRAINT products_pay_within_check, DROP COLUMN pay_within_ms;
