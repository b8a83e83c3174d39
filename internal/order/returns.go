package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// returner gives back the units of reservations that end (expired or cancelled), exactly once: one
// conditional transition in PostgreSQL under the product's row lock, then, for the redis and queue
// strategies, the gate's part, which the sweeper drives again if it is missing. See
// docs/strategies.md#reservations. It is safe for concurrent use.
type returner struct {
	*core
	gate   *inventory.Gate
	seeder *seeder // its locks: the gates' repair locks, which seedings hold too
}

// gated reports whether products of strategy s keep a Redis gate that returns must reach.
func gated(s inventory.Strategy) bool {
	return s == inventory.StrategyRedis || s == inventory.StrategyQueue
}

// endSQL ends pending orders of @product, chosen by %s (a subquery over orders, which may read
// t.at, the transaction's moment on PostgreSQL's clock): cancelled before their pay_by,
// expired at or after it. Their units go back to the stock in the same statement. It returns
// the orders it ended.
const endSQL = `WITH t AS (SELECT clock_timestamp() AS at),
e AS (
	UPDATE orders o SET status = CASE WHEN o.pay_by > t.at THEN 'cancelled' ELSE 'expired' END,
		ended_at = t.at, gate_returned_at = CASE WHEN @gated THEN NULL ELSE t.at END
	FROM t WHERE o.id IN (%s) AND o.product_id = @product AND o.status = 'pending'
	RETURNING o.id, o.user_id
), s AS (
	UPDATE products SET stock = stock + (SELECT count(*) FROM e), updated_at = now()
	WHERE id = @product AND EXISTS (SELECT FROM e)
)
SELECT id, user_id FROM e`

var (
	// endOneSQL ends order @id, waiting for a transaction that holds it (a payment) to end.
	endOneSQL = fmt.Sprintf(endSQL, `@id`)
	// expireOneSQL ends order @id only if it is past its pay_by (a purchase by its buyer).
	expireOneSQL = fmt.Sprintf(endSQL, `SELECT id FROM orders WHERE id = @id AND pay_by <= (SELECT at FROM t)`)
	// sweepSQL expires up to @limit orders past their pay_by, oldest deadline first, skipping
	// the orders another transaction holds (a payment: it ends them, or the next pass does).
	sweepSQL = fmt.Sprintf(endSQL, `SELECT id FROM orders WHERE product_id = @product AND status = 'pending'
		AND pay_by <= (SELECT at FROM t) ORDER BY pay_by LIMIT @limit FOR UPDATE SKIP LOCKED`)
)

// ending is which pending orders of a product a return ends.
type ending struct {
	id      int64 // the order (Pay, Cancel, a purchase); 0: the sweeper's, up to limit past their pay_by
	limit   int
	dueOnly bool          // order id only if past its pay_by
	slots   chan struct{} // the sweeper's: one is held for the transaction, none while lifting
}

// errRowBusy is a sweep's error for a product whose row another transaction holds (a
// purchase thinking under it, a stalled process): the next pass tries again.
var errRowBusy = errors.New("product row held by another transaction")

// end ends pending orders of product p, as e says, and gives their units back. It returns the
// orders it ended, none when they had ended already, were paid, or (dueOnly) were not past
// their pay_by; a sweep returns errRowBusy at once when another transaction holds the
// product's row. The product's sold-out mark is lifted first (liftSoldOut), before the
// transaction, so that the lift's wait holds no row lock; if the lift fails, nothing changes.
func (r *returner) end(ctx context.Context, p inventory.Product, e ending) ([]inventory.Ended, error) {
	q, lock := endOneSQL, `SELECT id FROM products WHERE id = ? FOR UPDATE`
	switch {
	case e.id == 0:
		q, lock = sweepSQL, `SELECT id FROM products WHERE id = ? FOR UPDATE SKIP LOCKED`
	case e.dueOnly:
		q = expireOneSQL
	}
	// The units must be back in PostgreSQL within the sold-out hold of the lift, or a mark
	// made after the hold, from a stock still 0, would outlive their return (SoldOut.Lift).
	// Half the hold bounds the lift and the transaction: the context ends a slow one, and
	// PostgreSQL ends one whose process stopped mid-transaction (SIGSTOP, a stall) and rolls
	// it back.
	bound := r.soldOut.Hold() / 2
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	if err := r.liftSoldOut(ctx, p.ID); err != nil {
		return nil, fmt.Errorf("%w: lift the sold-out mark of product %d: %w", ErrUnavailable, p.ID, err)
	}
	var rows []struct {
		ID     int64
		UserID int64
	}
	err := r.holding(ctx, e.slots, func() error {
		return r.runTx(ctx, func(tx *gorm.DB) error {
			if err := tx.Exec(fmt.Sprintf("SET LOCAL idle_in_transaction_session_timeout = %d", bound.Milliseconds())).Error; err != nil {
				return err
			}
			var locked []int64
			if err := tx.Raw(lock, p.ID).Scan(&locked).Error; err != nil {
				return fmt.Errorf("lock product %d: %w", p.ID, err)
			}
			if len(locked) == 0 && e.id == 0 {
				return errRowBusy
			}
			if len(locked) == 0 {
				return fmt.Errorf("product %d: %w", p.ID, inventory.ErrNotFound)
			}
			return tx.Raw(q, map[string]any{"product": p.ID, "id": e.id, "limit": e.limit, "gated": gated(p.Strategy)}).
				Scan(&rows).Error
		})
	})
	if err != nil {
		return nil, fmt.Errorf("end reservations of product %d: %w", p.ID, err)
	}
	ended := make([]inventory.Ended, len(rows))
	for i, row := range rows {
		ended[i] = inventory.Ended{Order: row.ID, User: row.UserID}
	}
	if gated(p.Strategy) && len(ended) > 0 {
		if err := r.toGate(ctx, p.ID, ended); err != nil {
			r.log.WarnContext(ctx, "units returned in PostgreSQL, not yet in the gate; the sweeper will retry",
				"product_id", p.ID, "orders", len(ended), "err", err)
		}
	}
	return ended, nil
}

// holding runs fn holding one of slots (nil: none needed), waiting for it up to ctx's end.
func (r *returner) holding(ctx context.Context, slots chan struct{}, fn func() error) error {
	if slots == nil {
		return fn()
	}
	select {
	case slots <- struct{}{}:
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	defer func() { <-slots }()
	return fn()
}

// gateWait bounds the wait for a gate's repair lock (a seeding holds it) before a return to
// the gate is left to the sweeper.
const gateWait = 2 * time.Second

// toGate gives the units of ended orders of product id back to its gate, under the gate's
// repair lock (so that no seeding reads PostgreSQL between a return's commit and this: see
// inventory.Seeding.Returned), and records it on the orders.
func (r *returner) toGate(ctx context.Context, id int64, ended []inventory.Ended) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gateWait+5*time.Second)
	defer cancel()
	return r.seeder.locks.Do(ctx, r.keys.GateRepairLock(id), 5*time.Second, gateWait, false,
		func(ctx context.Context, _ HeldLock) error {
			if _, err := r.gate.Return(ctx, id, ended); err != nil {
				return err
			}
			ids := make([]int64, len(ended))
			for i, e := range ended {
				ids[i] = e.Order
			}
			err := r.db.WithContext(ctx).Exec(`UPDATE orders SET gate_returned_at = clock_timestamp()
				WHERE id = ANY(CAST(? AS bigint[])) AND gate_returned_at IS NULL`, pgArray(ids)).Error
			if err != nil {
				return fmt.Errorf("record the gate's return of product %d: %w", id, err)
			}
			return nil
		})
}

// settleUser is for a buyer the gate of product id counts as admitted: if the user holds no live
// order but has ended reservations, it drives the missing gate part of their returns and reports
// true, so the buyer may be admitted again at once. An error means those units could not go back
// to the gate now (the sweeper retries); no answer may then say a purchase is in flight.
func (r *returner) settleUser(ctx context.Context, id, user int64) (bool, error) {
	var rows []struct {
		ID      int64
		Missing bool
	}
	err := r.db.WithContext(ctx).Raw(`SELECT id, gate_returned_at IS NULL AS missing FROM orders
		WHERE product_id = @p AND user_id = @u AND status IN ('expired', 'cancelled')
		AND NOT EXISTS (SELECT FROM orders WHERE product_id = @p AND user_id = @u AND `+liveStatus+`)`,
		map[string]any{"p": id, "u": user}).Scan(&rows).Error
	if err != nil {
		return false, fmt.Errorf("read ended reservations of user %d, product %d: %w", user, id, err)
	}
	if len(rows) == 0 {
		return false, nil
	}
	var ended []inventory.Ended
	for _, row := range rows {
		if row.Missing {
			ended = append(ended, inventory.Ended{Order: row.ID, User: user})
		}
	}
	if len(ended) == 0 {
		return true, nil // given back meanwhile, by whoever ended them
	}
	if err := r.toGate(ctx, id, ended); err != nil {
		r.log.WarnContext(ctx, "a buyer's ended reservation is not back in the gate yet; the sweeper will retry",
			"product_id", id, "user_id", user, "err", err)
		return false, fmt.Errorf("the gate of product %d still counts user %d for an ended reservation: %w", id, user, err)
	}
	return true, nil
}
