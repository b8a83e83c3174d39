package order_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// panicky is an Observer whose Batch panics: a bug in the code a batch leader runs after its
// batch committed and before it answered the buyers.
type panicky struct{}

func (panicky) Purchased(inventory.Strategy, string, time.Duration) {}
func (panicky) Batch(int)                                           { panic("observer bug") }
func (panicky) Settled(string)                                      {}
func (panicky) Reconciled(int, int)                                 {}
func (panicky) Returned(string, int)                                {}
func (panicky) DeadLettered(string, int)                            {}
func (panicky) Shed(inventory.Strategy)                             {}
func (panicky) FenceRaised()                                        {}

// TestLeaderPanicAnswersEveryBuyer: the leader of a batch panics after its batch committed
// and before it answered anyone. The panic is its own bug: every buyer of the batch still
// gets an answer, and the true one (201 with the order that committed), nobody waits for
// ever, and the process goes on.
func TestLeaderPanicAnswersEveryBuyer(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{})
	s := newService(t, e, process{obs: panicky{}}, batchCfg(4))
	p := e.product(t, 10, inventory.StrategyDlock, 0)
	users := []int64{1, 2, 3, 4}
	outcomes := buyAll(s, p.ID, users)
	e.checkAnswers(t, p.ID, users, outcomes)
	if count(outcomes, order.OutcomeBought) != len(users) {
		t.Errorf("outcomes = %v, want all bought: the batch committed before the panic", outcomes)
	}
}

// TestPurchaseDeadline: a purchase that cannot finish within PurchaseTimeout (think_ms past
// it) is ErrBusy, whatever the strategy, and writes nothing; but a queue-strategy purchase is
// queued before the deadline: it is ErrAccepted, and its order is written all the same.
func TestPurchaseDeadline(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{PurchaseTimeout: 200 * time.Millisecond})
	for _, strategy := range inventory.Strategies {
		p := e.product(t, 5, strategy, 1000)
		_, err := e.app.Orders.Purchase(context.Background(), p.ID, 1)
		if strategy == inventory.StrategyQueue {
			if !errors.Is(err, order.ErrAccepted) {
				t.Errorf("queue: purchase past its deadline = %v, want ErrAccepted", err)
			}
			waitOrder(t, e, p.ID, 1)
			continue
		}
		if !errors.Is(err, order.ErrBusy) {
			t.Errorf("%s: purchase past its deadline = %v, want ErrBusy", strategy, err)
		}
		if e.hasOrder(t, p.ID, 1) {
			t.Errorf("%s: a purchase answered busy has an order", strategy)
		}
	}
}

// TestBuyerWhoLeaves: a buyer whose request ends mid-purchase (during think_ms) gets
// ErrCanceled (outcome "canceled"), not an internal error, and nothing of theirs is written.
// (A batch's leader, dlock or redis, works on for the buyers who joined it, its own
// included: see TestBatchBuyerWhoLeaves for a buyer who leaves an open batch.)
func TestBuyerWhoLeaves(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{})
	for _, strategy := range inventory.Strategies {
		if strategy == inventory.StrategyDlock || strategy == inventory.StrategyRedis {
			continue // batched
		}
		if strategy == inventory.StrategyQueue {
			continue // queued before think_ms: the purchase stands (TestPurchaseDeadline)
		}
		p := e.product(t, 5, strategy, 300)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err := e.app.Orders.Purchase(ctx, p.ID, 1)
		cancel()
		if got := order.Outcome(err); got != order.OutcomeCanceled {
			t.Errorf("%s: purchase of a buyer who left = %v (%s), want canceled", strategy, err, got)
		}
		if e.hasOrder(t, p.ID, 1) {
			t.Errorf("%s: a buyer who left before the write has an order", strategy)
		}
	}
}

// TestSlowProductLeavesConnections: a pessimistic product whose buyers hold its row lock for
// think_ms, with a crowd that keeps queueing on it, takes at most ProductConns of a pool of
// four; purchases of another product still get connections within their deadline. (With no
// cap, ProductConns 1000, the crowd waits in the pool, takes every connection freed, and
// they fail busy: checked when this test was written.)
func TestSlowProductLeavesConnections(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{})
	gdb, err := db.Open(testenv.Schema(t), db.PoolOptions{MaxOpen: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sqlDB, _ := gdb.DB(); sqlDB.Close() })
	e.db, e.store = gdb, labStore(gdb)
	s := newService(t, e, process{}, order.Config{ProductConns: 2, PurchaseTimeout: time.Second})
	slow := e.product(t, 1000, inventory.StrategyPessimistic, 200)
	other := e.product(t, 100, inventory.StrategyOptimistic, 0)
	ctx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	var wg sync.WaitGroup
	for w := range int64(20) { // the crowd: each buyer queues on the row lock, again and again
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := w * 1000; ctx.Err() == nil; u++ {
				_, _ = s.Purchase(ctx, slow.ID, u+1)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // the crowd has taken what it can
	for u := int64(1); u <= 5; u++ {
		if _, err := s.Purchase(context.Background(), other.ID, u); err != nil {
			t.Errorf("purchase of another product while one is slow = %v, want bought", err)
		}
	}
	stop()
	wg.Wait()
}
