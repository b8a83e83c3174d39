package order_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// TestPurchaseRaisesFenceRedisLost: the product holds a fence Redis no longer knows (minted
// by a clock 60 s ahead, then the clock set right and the fence key lost, as a restart from
// older data leaves it), so the lock's next fence is below it. The very next purchase of a
// dlock product and of a bundle is sold at once: the holder, still holding its lock, raises
// its fence above the product's and writes again; the fence key then carries the raise, so
// the purchase after needs none. Before the raise existed, each was answered busy until the
// clock passed the product's fence, 60 s later.
func TestPurchaseRaisesFenceRedisLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{LockWait: time.Second})
	ctx := context.Background()
	p := e.product(t, 10, inventory.StrategyDlock, 0)
	q := e.product(t, 10, inventory.StrategyDlock, 0)
	for _, id := range []int64{p.ID, q.ID} {
		if _, err := e.app.Orders.Purchase(ctx, id, 1); err != nil {
			t.Fatal(err)
		}
	}
	ahead := time.Minute.Microseconds()
	if err := e.db.Exec(`UPDATE products SET fence = fence + ? WHERE id IN (?, ?)`, ahead, p.ID, q.ID).Error; err != nil {
		t.Fatal(err)
	}
	stored := fenceOf(t, e, p.ID)
	flushPrefix(t, e.rdb, e.prefix) // the fence keys lost with the rest

	began := time.Now()
	if _, err := e.app.Orders.Purchase(ctx, p.ID, 2); err != nil {
		t.Fatalf("purchase under a fence below the product's = %v, want sold at once", err)
	}
	if _, err := e.app.Orders.PurchaseBundle(ctx, []int64{p.ID, q.ID}, 3); err != nil {
		t.Fatalf("bundle under fences below the products' = %v, want sold at once", err)
	}
	t.Logf("sold and bundled past fences %v ahead of the clock in %v", time.Minute, time.Since(began).Round(time.Millisecond))
	raised := fenceOf(t, e, p.ID)
	if raised <= stored {
		t.Fatalf("product's fence after the raise = %d, want above %d", raised, stored)
	}
	if _, err := e.app.Orders.Purchase(ctx, p.ID, 4); err != nil {
		t.Fatalf("purchase after the raise: %v", err)
	}
	if f := fenceOf(t, e, p.ID); f <= raised {
		t.Fatalf("fence of the next grant = %d, want above the raised %d", f, raised)
	}
	e.wantAudit(t, p.ID, 4, 6)
	e.wantAudit(t, q.ID, 2, 8)
}

// TestEqualFenceOfAnotherGrantRefused: two grants with the same fence, as a lock whose store
// lost its last fence could give, write one after the other: the second is refused
// (ErrFenced), whoever it is, so at most one of them writes.
func TestEqualFenceOfAnotherGrantRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{})
	p := e.product(t, 10, inventory.StrategyDlock, 0)
	const fence = 1_000_000
	for i, want := range []error{nil, inventory.ErrFenced} {
		err := e.db.Transaction(func(tx *gorm.DB) error {
			_, err := inventory.DecrementFenced(tx, p.ID, 1, fence)
			return err
		})
		if !errors.Is(err, want) {
			t.Fatalf("grant %d with fence %d: %v, want %v", i+1, fence, err, want)
		}
	}
}

// fenceOf is the fence product id holds in PostgreSQL.
func fenceOf(t *testing.T, e *env, id int64) int64 {
	t.Helper()
	var f int64
	if err := e.db.Raw(`SELECT fence FROM products WHERE id = ?`, id).Scan(&f).Error; err != nil {
		t.Fatal(err)
	}
	return f
}
