package testenv_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// TestReservationSale: a watch records each order when first seen, and seen ended; the sale
// the history checker gets has each buyer's orders, oldest first, and one return per ended
// reservation from its ended_at, bounded by what the watch saw (PostgreSQL strategies) or by
// gate_returned_at (gated ones), and each order's time written.
func TestReservationSale(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	sqlDB, _ := gdb.DB()
	exec := func(q string, args ...any) {
		t.Helper()
		if err := gdb.Exec(q, args...).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ctx := context.Background()
	exec(`INSERT INTO products (id, name, stock, initial_stock, strategy, pay_within_ms) VALUES (1, 'p', 1, 2, 'pessimistic', 60000)`)
	exec(`INSERT INTO orders (product_id, user_id) VALUES (1, 7)`) // order 1, pending (the trigger)
	exec(`UPDATE products SET stock = 0 WHERE id = 1`)
	w := testenv.NewWatch(sqlDB, 1)
	if s, err := w.Sample(ctx); err != nil || s != (testenv.Snapshot{Stock: 0, Initial: 2, Live: 1}) {
		t.Fatalf("sample = %+v, %v", s, err)
	}
	seen := time.Now()
	exec(`UPDATE orders SET status = 'cancelled', ended_at = clock_timestamp(), gate_returned_at = clock_timestamp() WHERE user_id = 7`)
	exec(`UPDATE products SET stock = stock + 1 WHERE id = 1`)
	if _, err := w.Sample(ctx); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	exec(`INSERT INTO orders (product_id, user_id) VALUES (1, 7)`) // order 2: the buyer again
	for _, gated := range []bool{false, true} {
		sale, err := testenv.ReservationSale(ctx, sqlDB, 1, gated, w, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := sale.Reservations[1][7]; len(got) != 2 || got[0] >= got[1] || sale.Stock[1] != 2 {
			t.Fatalf("gated %v: orders %v, stock %v, want two of user 7, oldest first, of stock 2", gated, got, sale.Stock)
		}
		if len(sale.Returns) != 1 {
			t.Fatalf("gated %v: returns %+v, want one", gated, sale.Returns)
		}
		r, first := sale.Returns[0], sale.Reservations[1][7][0]
		var ended, inGate sql.NullTime
		if err := sqlDB.QueryRow(`SELECT ended_at, gate_returned_at FROM orders WHERE id = $1`, first).Scan(&ended, &inGate); err != nil {
			t.Fatal(err)
		}
		want := inGate.Time
		if !gated {
			want = r.Complete // the watch's second sample: after the return, before back
			if want.Before(ended.Time) || want.After(back) {
				t.Fatalf("return completes %v, want a moment the watch saw it, between %v and %v", want, ended.Time, back)
			}
		}
		if r.Order != first || !r.Invoke.Equal(ended.Time) || !r.Complete.Equal(want) {
			t.Fatalf("gated %v: return %+v, want order %d from %v to %v", gated, r, first, ended.Time, want)
		}
		if w := sale.Written[first]; w.IsZero() || w.After(seen) {
			t.Fatalf("gated %v: order %d written by %v, want by the first sample (before %v)", gated, first, w, seen)
		}
	}
}
