-- The oversell lab's postgres lock (internal/lab, docs/lab.md) takes each grant's fencing token
-- from this sequence: nextval never hands out a value twice, rolled back or not, and with
-- CACHE 1 (the default, which the lab relies on) it hands them out in the order it is called,
-- across every session, so a later holder always has a larger token.

-- +goose Up
CREATE SEQUENCE lab_lock_fence;

-- +goose Down
DROP SEQUENCE lab_lock_fence;
