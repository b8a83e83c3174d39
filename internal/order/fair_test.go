package order_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// TestFairPutBack: buyers of a fair product who joined its batch after another process's
// waiter are put back, to be served after it. While that process holds the lock, a put-back
// buyer whose client goes away is answered ErrCanceled at once and sold nothing; one whose
// own deadline passes is answered busy; and the one whose deadline is later is not cut short
// by theirs: it buys once the lock is free.
func TestFairPutBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{PurchaseTimeout: 5 * time.Second, LockWait: 10 * time.Second})
	p, err := e.store.Create(context.Background(), inventory.NewProduct{Name: "fair", Stock: 10, Fair: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := inventory.Keys{Prefix: e.prefix}.Lock(p.ID)
	queued := func(n int64) { // waits until n waiters are in the fair lock's queue
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); e.rdb.LLen(ctx, key+":queue").Val() != n; time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%d waiters in the queue after 5s, want %d", e.rdb.LLen(ctx, key+":queue").Val(), n)
			}
		}
	}
	other := func() *dlock.Client { // another process's lock client
		c := dlock.New(e.rdb, nil)
		t.Cleanup(func() { c.Close() })
		return c
	}
	holder, err := other().ObtainFair(ctx, key, 30*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	buyer1 := goPurchase(ctx, e.app.Orders, p.ID, 1) // leads this process's batch, queued first
	queued(1)
	waiting := make(chan *dlock.Lock, 1)
	go func() {
		l, err := other().ObtainFair(ctx, key, 30*time.Second, &dlock.Options{Wait: 20 * time.Second})
		if err != nil {
			t.Error(err)
		}
		waiting <- l
	}()
	queued(2) // the other process's waiter, behind buyer 1's leader
	short := goPurchase(ctx, e.app.Orders, p.ID, 3)
	time.Sleep(2500 * time.Millisecond) // the next two buyers' deadlines are 2.5 s later
	gone, leave := context.WithCancel(ctx)
	defer leave()
	canceled := goPurchase(gone, e.app.Orders, p.ID, 2)
	long := goPurchase(ctx, e.app.Orders, p.ID, 4)
	time.Sleep(200 * time.Millisecond) // buyers 2 to 4 join buyer 1's batch
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-buyer1; err != nil {
		t.Fatalf("buyer 1, before the other process's waiter = %v", err)
	}
	held := <-waiting // the other process holds the lock; buyers 2 to 4 were put back after it
	if held == nil {
		t.FailNow()
	}
	leave()
	select {
	case err := <-canceled:
		if !errors.Is(err, order.ErrCanceled) {
			t.Errorf("put-back buyer whose client went away = %v, want ErrCanceled", err)
		}
	case <-time.After(time.Second):
		t.Error("put-back buyer whose client went away not answered within 1s")
	}
	if err := <-short; !errors.Is(err, order.ErrBusy) {
		t.Errorf("put-back buyer past its deadline = %v, want ErrBusy", err)
	}
	select {
	case err := <-long:
		t.Fatalf("put-back buyer with 2.5s left answered with another's deadline: %v", err)
	default:
	}
	if err := held.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-long; err != nil {
		t.Errorf("put-back buyer with a later deadline = %v, want its order", err)
	}
	for u, want := range map[int64]bool{1: true, 2: false, 3: false, 4: true} {
		if got := e.hasOrder(t, p.ID, u); got != want {
			t.Errorf("buyer %d has an order: %v, want %v", u, got, want)
		}
	}
}
