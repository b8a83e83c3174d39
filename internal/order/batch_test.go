package order_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// batchCfg makes every batch wait until it is full, so a test decides what one batch holds.
func batchCfg(size int) order.Config {
	return order.Config{BatchMax: size, BatchLinger: 5 * time.Second, LockWait: 10 * time.Second}
}

// TestBatchStraddlesSellOut: one batch of 10 buyers meets 4 units: the first 4 in the batch
// buy, the other 6 are told sold out, and the decrement stops at zero.
func TestBatchStraddlesSellOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, batchCfg(10))
	p := e.product(t, 4, inventory.StrategyDlock, 0)
	users := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	out := buyAll(e.app.Orders, p.ID, users)
	if got := count(out, order.OutcomeBought); got != 4 {
		t.Fatalf("bought = %d, want 4: %v", got, out)
	}
	if got := count(out, order.OutcomeSoldOut); got != 6 {
		t.Fatalf("sold out = %d, want 6: %v", got, out)
	}
	e.wantAudit(t, p.ID, 4, 0)
}

// TestBatchWithRepeatBuyers: a batch holds a user twice and a user who bought before; each
// gets one order at most, and stock moves by the number of orders only.
func TestBatchWithRepeatBuyers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, batchCfg(6))
	p := e.product(t, 10, inventory.StrategyDlock, 0)
	// user 100 bought before (written directly: a lone buyer would wait out the linger)
	writeOrders(t, e.db, p.ID, 100, 100)
	out := buyAll(e.app.Orders, p.ID, []int64{1, 2, 2, 100, 3, 3})
	if got, want := count(out, order.OutcomeBought), 3; got != want {
		t.Fatalf("bought = %d, want %d: %v", got, want, out)
	}
	if got, want := count(out, order.OutcomeAlreadyPurchased), 3; got != want {
		t.Fatalf("already purchased = %d, want %d: %v", got, want, out)
	}
	e.wantAudit(t, p.ID, 4, 6)
}

// TestBatchLostLockWritesNothing: the lock of a batch is lost while it thinks; the whole
// batch rolls back and every buyer in it is told busy. (Buyers who joined too late for that
// batch form the next one, which may buy: every answer must then match PostgreSQL.)
func TestBatchLostLockWritesNothing(t *testing.T) {
	t.Parallel()
	cfg := batchCfg(5)
	cfg.LockTTL = 300 * time.Millisecond
	e := newEnv(t, cfg)
	p := e.product(t, 10, inventory.StrategyDlock, 1500)
	users := []int64{1, 2, 3, 4, 5}
	done := make(chan []string)
	go func() { done <- buyAll(e.app.Orders, p.ID, users) }()
	ctx := context.Background()
	testenv.Eventually(t, 5*time.Second, "the batch's lock", func() bool { return e.rdb.Exists(ctx, e.app.Keys.Lock(p.ID)).Val() == 1 })
	time.Sleep(100 * time.Millisecond) // the batch is thinking
	e.rdb.Del(ctx, e.app.Keys.Lock(p.ID))
	out := <-done
	if count(out, order.OutcomeBusy) == 0 || count(out, order.OutcomeBusy)+count(out, order.OutcomeBought) != len(users) {
		t.Fatalf("outcomes = %v, want the lost batch busy and any later one bought", out)
	}
	e.checkAnswers(t, p.ID, users, out)
	if a := e.audit(t, p.ID); a.Orders != count(out, order.OutcomeBought) || !a.Consistent {
		t.Fatalf("audit = %+v", a)
	}
}

// TestBatchBuyerWhoLeaves: a buyer whose context ends while the batch is still open leaves
// it and gets the context's error; the others are served.
func TestBatchBuyerWhoLeaves(t *testing.T) {
	t.Parallel()
	for _, strategy := range []inventory.Strategy{inventory.StrategyDlock, inventory.StrategyRedis} {
		t.Run(string(strategy), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, order.Config{BatchMax: 3, BatchLinger: 5 * time.Second})
			p := e.product(t, 10, strategy, 0)
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			lead := goPurchase(ctx, e.app.Orders, p.ID, 1) // leads, lingers
			time.Sleep(50 * time.Millisecond)
			leaver := goPurchase(ctx, e.app.Orders, p.ID, 2) // leaves at 200ms
			time.Sleep(300 * time.Millisecond)
			out := buyAll(e.app.Orders, p.ID, []int64{3, 4}) // fill the batch: 1, 3, 4
			if first, second := <-lead, <-leaver; !errors.Is(second, context.DeadlineExceeded) && !errors.Is(first, context.DeadlineExceeded) {
				t.Fatalf("the buyer who left got %v / %v, want a deadline error", first, second)
			}
			if count(out, order.OutcomeBought) != 2 {
				t.Fatalf("outcomes = %v", out)
			}
			// Consistent: for the redis strategy, the gate gave the unit of the buyer who left back.
			if a := e.audit(t, p.ID); a.Orders != 3 || !a.Consistent {
				t.Fatalf("audit = %+v (redis %+v), want orders of users 1, 3 and 4", a, a.Redis)
			}
		})
	}
}
