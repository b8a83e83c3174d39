package order

import (
	"context"
	"errors"
	"testing"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// TestOrderOrSoldOutOneSnapshot: the answer to a buyer of a product that had no stock reads
// the stock and the buyer's live order at one moment. A buyer holding a reservation is
// answered with it; once the reservation ended and its unit came back, the same buyer is
// sent on to buy (errUnitBack), not told sold out, which was true at no moment (the
// history checker found that answer in a chaos run, the two read apart by a return); with
// no stock and no order, sold out. Against the former two reads, the middle case fails.
func TestOrderOrSoldOutOneSnapshot(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	ctx := context.Background()
	p, err := inventory.NewStore(gdb).Create(ctx, inventory.NewProduct{Name: "p", Stock: 1, PayWithinMS: 60_000})
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string, args ...any) {
		t.Helper()
		if err := gdb.Exec(q, args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	exec(`INSERT INTO orders (product_id, user_id) VALUES (?, 7)`, p.ID) // pending: the trigger
	exec(`UPDATE products SET stock = 0 WHERE id = ?`, p.ID)
	var held *PurchasedError
	if err := orderOrSoldOut(gdb, p.ID, 7); !errors.As(err, &held) || held.Order.UserID != 7 || held.Order.Status != StatusPending {
		t.Fatalf("a buyer holding a reservation: %v, want already purchased with it", err)
	}
	exec(`UPDATE orders SET status = 'cancelled', ended_at = clock_timestamp(), gate_returned_at = clock_timestamp()
		WHERE product_id = ? AND user_id = 7`, p.ID)
	exec(`UPDATE products SET stock = stock + 1 WHERE id = ?`, p.ID)
	if err := orderOrSoldOut(gdb, p.ID, 7); !errors.Is(err, errUnitBack) {
		t.Fatalf("the buyer once its reservation ended and its unit came back: %v, want %v", err, errUnitBack)
	}
	exec(`UPDATE products SET stock = 0 WHERE id = ?`, p.ID)
	if err := orderOrSoldOut(gdb, p.ID, 7); !errors.Is(err, inventory.ErrSoldOut) {
		t.Fatalf("no stock, no order: %v, want sold out", err)
	}
	if err := orderOrSoldOut(gdb, p.ID+1000, 7); !errors.Is(err, inventory.ErrNotFound) {
		t.Fatalf("no product: %v, want not found", err)
	}
}
