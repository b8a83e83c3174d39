package order_test

import (
	"context"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// TestLiftWaitsOutsideRowLock: a return of a sold-out product waits out the sold-out mark's
// lease (SOLDOUT_LEASE, 3 s here) before its transaction, not inside it: while a cancel waits
// in its lift, the product's row is free (a NOWAIT lock of it succeeds), and the cancel then
// gives its unit back once.
func TestLiftWaitsOutsideRowLock(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	rdb, prefix := testenv.Redis(t)
	a := app.New(app.Config{Plug: teaching, DB: gdb, Redis: rdb, RedisPrefix: prefix, Order: noSweeper,
		SoldOut: inventory.SoldOutOptions{Lease: 3 * time.Second, Hold: 20 * time.Second}})
	t.Cleanup(func() { a.Close() })
	e := &env{db: gdb, rdb: rdb, prefix: prefix, app: a, store: labStore(gdb)}
	ctx := context.Background()
	p := e.windowProduct(t, 1, inventory.StrategyPessimistic, time.Minute)
	buy(t, a.Orders, p.ID, 1)
	if rdb.Exists(ctx, a.Keys.SoldOut(p.ID)).Val() != 1 {
		t.Fatal("the sold-out product is not marked: the cancel's lift would not wait, and the check below would prove nothing")
	}

	cancelled := make(chan error, 1)
	go func() { _, err := a.Orders.Cancel(ctx, p.ID, 1); cancelled <- err }()
	testenv.Eventually(t, 5*time.Second, "the cancel's lift to delete the mark", func() bool {
		return rdb.Exists(ctx, a.Keys.SoldOut(p.ID)).Val() == 0
	})
	tx := gdb.Begin()
	err := tx.Exec(`SELECT id FROM products WHERE id = ? FOR UPDATE NOWAIT`, p.ID).Error
	tx.Rollback()
	if err != nil {
		t.Errorf("lock the product's row while a cancel waits in its lift: %v, want it free", err)
	}
	if err := <-cancelled; err != nil {
		t.Fatal(err)
	}
	e.wantAudit(t, p.ID, 0, 1)
	if o, err := a.Orders.OrderOf(ctx, p.ID, 1); err != nil || o.Status != order.StatusCancelled {
		t.Fatalf("order after the cancel = %+v, %v; want cancelled", o, err)
	}
}
