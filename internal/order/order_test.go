package order_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// TestLockLostMidTransaction: the watchdog finds the holder's lock gone while it is inside
// its transaction (here the key is deleted from outside, as when a lease expires); the
// transaction rolls back and the buyer is told busy, while the next holder sells normally.
func TestLockLostMidTransaction(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{LockTTL: 300 * time.Millisecond, LockWait: 3 * time.Second})
	p := e.product(t, 10, inventory.StrategyDlock, 1500)
	ctx := context.Background()

	errc := goPurchase(ctx, e.app.Orders, p.ID, 1)
	lockKey := e.app.Keys.Lock(p.ID)
	testenv.Eventually(t, 5*time.Second, "the lock to be taken", func() bool { return e.rdb.Exists(ctx, lockKey).Val() == 1 })
	e.rdb.Del(ctx, lockKey) // the lease is gone while the holder thinks

	if err := <-errc; !errors.Is(err, order.ErrBusy) {
		t.Fatalf("purchase whose lock was lost = %v, want ErrBusy", err)
	}
	e.wantAudit(t, p.ID, 0, 10) // nothing written
}

// TestStaleFenceCannotWrite: a holder paused past its lease (no watchdog) wakes up after
// another process took the lock and wrote; its write is rejected by the fence in PostgreSQL.
func TestStaleFenceCannotWrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{})
	p := e.product(t, 10, inventory.StrategyDlock, 0)
	ctx := context.Background()
	locks := dlock.New(e.rdb, nil)
	defer locks.Close()

	old, err := locks.Obtain(ctx, e.app.Keys.Lock(p.ID), 100*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(250 * time.Millisecond) // the "GC pause": the lease expires
	cur, err := locks.Obtain(ctx, e.app.Keys.Lock(p.ID), time.Second, nil)
	if err != nil {
		t.Fatalf("obtain after expiry: %v", err)
	}
	defer cur.Release(ctx)
	write := func(fence int64) error {
		return e.db.Transaction(func(tx *gorm.DB) error {
			_, err := inventory.DecrementFenced(tx, p.ID, 1, fence)
			return err
		})
	}
	if err := write(cur.Fence()); err != nil {
		t.Fatalf("current holder's write: %v", err)
	}
	if err := write(old.Fence()); !errors.Is(err, inventory.ErrFenced) {
		t.Fatalf("stale holder's write = %v, want ErrFenced", err)
	}
	if err := old.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
		t.Fatalf("stale release = %v, want ErrNotHeld", err)
	}
}

// TestSaleSurvivesRedisDataLoss: every Redis key of the deployment disappears mid-sale (a
// restart without persistence); fences keep increasing and the sale goes on.
func TestSaleSurvivesRedisDataLoss(t *testing.T) {
	t.Parallel()
	for _, s := range []inventory.Strategy{inventory.StrategyDlock, inventory.StrategyRedis} {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, order.Config{})
			p := e.product(t, 3, s, 0)
			ctx := context.Background()
			if _, err := e.app.Orders.Purchase(ctx, p.ID, 1); err != nil {
				t.Fatal(err)
			}
			flushPrefix(t, e.rdb, e.prefix)
			if _, err := e.app.Orders.Purchase(ctx, p.ID, 1); !errors.Is(err, order.ErrAlreadyPurchased) {
				t.Fatalf("repeat buyer after data loss = %v, want ErrAlreadyPurchased", err)
			}
			for u := int64(2); u <= 3; u++ {
				if _, err := e.app.Orders.Purchase(ctx, p.ID, u); err != nil {
					t.Fatalf("purchase after data loss: %v", err)
				}
			}
			if _, err := e.app.Orders.Purchase(ctx, p.ID, 4); !errors.Is(err, inventory.ErrSoldOut) {
				t.Fatalf("purchase beyond stock = %v, want ErrSoldOut", err)
			}
			e.wantAudit(t, p.ID, 3, 0)
		})
	}
}

// TestGateGivesBackOnFailedWrite: an admitted buyer whose PostgreSQL write fails returns the
// unit to the gate, so Redis and PostgreSQL still agree and the unit is sold to someone else.
// The write fails here because the purchase's deadline (100 ms) ends during think_ms (300 ms):
// a buyer's own context no longer can, once its batch's leader has taken it (the answer is
// then the batch's, as under the dlock strategy).
func TestGateGivesBackOnFailedWrite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{})
	p := e.product(t, 2, inventory.StrategyRedis, 300)
	hasty := app.New(app.Config{Plug: teaching, DB: e.db, Redis: e.rdb, RedisPrefix: e.prefix, Order: order.Config{PurchaseTimeout: 100 * time.Millisecond}})
	t.Cleanup(func() { hasty.Close() })
	if _, err := hasty.Orders.Purchase(context.Background(), p.ID, 1); !errors.Is(err, order.ErrBusy) {
		t.Fatalf("purchase whose deadline ends mid-write = %v, want ErrBusy", err)
	}
	var wg sync.WaitGroup
	for u := int64(2); u <= 3; u++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := e.app.Orders.Purchase(context.Background(), p.ID, u); err != nil {
				t.Errorf("purchase by %d: %v", u, err)
			}
		}()
	}
	wg.Wait()
	e.wantAudit(t, p.ID, 2, 0)
}

// TestGateLostMidPurchase: Redis loses its data while an admitted buyer is still writing to
// PostgreSQL. Whether the next buyer re-seeds the gate before the in-flight purchase commits
// (the seed counts its unit as free and leaves it out; its confirmation repairs that) or after
// (its confirmation must not create a gate of its own), the audit agrees again.
func TestGateLostMidPurchase(t *testing.T) {
	t.Parallel()
	for _, reseedFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("reseed before commit %v", reseedFirst), func(t *testing.T) {
			t.Parallel()
			// Buyer 2 waits for buyer 1's writer slot (think_ms 400 and the write): a wait of
			// its own, not the default, so that a loaded machine does not answer busy.
			e := newEnv(t, order.Config{LockWait: 10 * time.Second})
			p := e.product(t, 5, inventory.StrategyRedis, 400)
			ctx := context.Background()
			errc := goPurchase(ctx, e.app.Orders, p.ID, 1)
			testenv.Eventually(t, 5*time.Second, "buyer 1's admission", func() bool { return e.rdb.SIsMember(ctx, e.app.Keys.GateBuyers(p.ID), 1).Val() })
			flushPrefix(t, e.rdb, e.prefix) // buyer 1 is thinking: admitted, not written
			if !reseedFirst {
				if err := <-errc; err != nil {
					t.Fatalf("the in-flight purchase: %v", err)
				}
			}
			if _, err := e.app.Orders.Purchase(ctx, p.ID, 2); err != nil {
				t.Fatalf("purchase after the data loss: %v", err)
			}
			if reseedFirst {
				if err := <-errc; err != nil {
					t.Fatalf("the in-flight purchase: %v", err)
				}
			}
			e.wantAudit(t, p.ID, 2, 3) // the gate agrees
		})
	}
}
