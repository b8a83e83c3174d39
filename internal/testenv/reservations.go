package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/seckill/seckill/internal/history"
)

// ReservationSale reads product id's orders in db, once the sale drained, and returns the
// history.Sale the checker needs for a product sold with a payment window: its stock, each buyer's
// orders, each ended reservation's return, and when each order was surely written. gated says
// whether the product has a gate (redis, queue); w (may be nil) and done give moments the test saw
// an order ended. See docs/testing.md#returns-in-the-history.
func ReservationSale(ctx context.Context, db *sql.DB, id int64, gated bool, w *Watch, done map[int64]time.Time) (history.Sale, error) {
	var initial int
	if err := db.QueryRowContext(ctx, `SELECT initial_stock FROM products WHERE id = $1`, id).Scan(&initial); err != nil {
		return history.Sale{}, fmt.Errorf("reservations of product %d: %w", id, err)
	}
	rows, err := db.QueryContext(ctx, `SELECT o.id, o.user_id, o.ended_at, o.gate_returned_at,
		o.pay_by - p.pay_within_ms * interval '1 millisecond'
		FROM orders o JOIN products p ON p.id = o.product_id WHERE o.product_id = $1 ORDER BY o.id`, id)
	if err != nil {
		return history.Sale{}, fmt.Errorf("reservations of product %d: %w", id, err)
	}
	defer rows.Close()
	orders := map[int64][]int64{}
	sale := history.Sale{Stock: map[int64]int{id: initial}, Reservations: map[int64]map[int64][]int64{id: orders},
		Written: map[int64]time.Time{}}
	for rows.Next() {
		var o, user int64
		var ended, inGate, inserted sql.NullTime
		if err := rows.Scan(&o, &user, &ended, &inGate, &inserted); err != nil {
			return history.Sale{}, fmt.Errorf("reservations of product %d: %w", id, err)
		}
		orders[user] = append(orders[user], o)
		written, back := w.seen(o)
		back = earliest(back, done[o])
		if gated {
			written, back = earliest(written, inserted.Time), inGate.Time
		}
		if !written.IsZero() {
			sale.Written[o] = written
		}
		if ended.Valid {
			sale.Returns = append(sale.Returns, history.Return{Product: id, User: user, Order: o, Invoke: ended.Time, Complete: back})
		}
	}
	if err := rows.Err(); err != nil {
		return history.Sale{}, fmt.Errorf("reservations of product %d: %w", id, err)
	}
	return sale, nil
}

// earliest is the earliest of ts that is not zero; zero if all are.
func earliest(ts ...time.Time) time.Time {
	var e time.Time
	for _, t := range ts {
		if !t.IsZero() && (e.IsZero() || t.Before(e)) {
			e = t
		}
	}
	return e
}
