package dlock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
)

// fairHeld starts a parallel test of a fair key (skipped under Redlock): it
// returns a client of the suite's Redis, the key, and a dlock Client that
// holds the key with ObtainFair for 5 s.
func fairHeld(t *testing.T) (redis.UniversalClient, string, *dlock.Client, *dlock.Lock) {
	t.Helper()
	skipRedlockSuite(t)
	rdb, key, c := oneKey(t, "fair")
	holder, err := c.ObtainFair(context.Background(), key, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	return rdb, key, c, holder
}

// queued waits until key's fair queue holds n waiters.
func queued(t *testing.T, rdb redis.UniversalClient, key string, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for rdb.LLen(context.Background(), dlock.Derive(key, ":queue")).Val() != n {
		if time.Now().After(deadline) {
			t.Fatalf("queue of %s: %d waiters, want %d", key, rdb.LLen(context.Background(), dlock.Derive(key, ":queue")).Val(), n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestFairOrderAcrossClients: nine waiters spread over three Clients (three processes, as
// far as Redis can tell) get a held fair key in the order they started waiting, and each
// lock has a newer fence than the one before.
func TestFairOrderAcrossClients(t *testing.T) {
	ctx := context.Background()
	rdb, key, c, holder := fairHeld(t)
	clients := []*dlock.Client{c, newClient(t, rdb, nil), newClient(t, rdb, nil)}
	const n = 9
	type grant struct {
		waiter int
		fence  int64
	}
	grants := make(chan grant, n)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range n {
		wg.Go(func() {
			opt := &dlock.Options{Wait: 30 * time.Second, Fair: true} // Obtain with Fair is ObtainFair
			l, err := clients[i%3].Obtain(ctx, key, 5*time.Second, opt)
			if err != nil {
				t.Error(err)
				grants <- grant{waiter: -1}
				return
			}
			grants <- grant{i, l.Fence()}
			time.Sleep(5 * time.Millisecond)
			if err := l.Release(ctx); err != nil {
				t.Error(err)
			}
		})
		queued(t, rdb, key, int64(i+1)) // the next one starts only once this one has its place
	}
	mustRelease(t, holder)
	last := holder.Fence()
	for want := range n {
		g := <-grants
		if g.waiter != want || g.fence <= last {
			t.Fatalf("grant %d went to waiter %d with fence %d (previous fence %d); want waiter %d, a newer fence", want, g.waiter, g.fence, last, want)
		}
		last = g.fence
	}
}

// TestFairVanishedWaiter: a waiter whose process went away (here its Redis connection is
// closed, so it can neither ask again nor leave the queue) holds the head of the queue for
// at most the queue timeout (1 s): the live waiter behind it gets the key long before its
// own 30 s wait would end.
func TestFairVanishedWaiter(t *testing.T) {
	ctx := context.Background()
	rdb, key, live, holder := fairHeld(t)
	ghostRdb := dialRedis(t)
	ghost := dlock.New(ghostRdb, nil)
	ghostDone := make(chan error, 1)
	go func() {
		_, err := ghost.ObtainFair(ctx, key, 5*time.Second, &dlock.Options{Wait: 30 * time.Second})
		ghostDone <- err
	}()
	queued(t, rdb, key, 1)
	_ = ghostRdb.Close() // the ghost's process is gone: no more calls, no leaving the queue
	if err := <-ghostDone; err == nil {
		t.Fatal("the ghost obtained the lock")
	}
	_ = ghost.Close()
	got := make(chan time.Duration, 1)
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		l, err := live.ObtainFair(ctx, key, 5*time.Second, &dlock.Options{Wait: 30 * time.Second})
		if err != nil {
			t.Error(err)
			got <- -1
			return
		}
		got <- time.Duration(0)
		_ = l.Release(ctx)
	})
	queued(t, rdb, key, 2)
	released := time.Now()
	mustRelease(t, holder)
	if <-got < 0 {
		return
	}
	if took := time.Since(released); took > 10*time.Second {
		t.Errorf("the live waiter got the key %v after the release: the vanished one blocked it past its 1 s timeout", took)
	}
	if n := rdb.LLen(ctx, dlock.Derive(key, ":queue")).Val(); n != 0 {
		t.Errorf("%d waiters left in the queue", n)
	}
}

// TestFairGiveUpLeavesQueue: a waiter whose context ends, or whose Wait runs out, leaves
// the queue at once, so nobody waits behind it; and under Redlock ObtainFair is refused.
func TestFairGiveUpLeavesQueue(t *testing.T) {
	ctx := context.Background()
	rdb, key, c, holder := fairHeld(t)
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := c.ObtainFair(cctx, key, 5*time.Second, &dlock.Options{Wait: 30 * time.Second})
		errc <- err
	}()
	queued(t, rdb, key, 1)
	cancel()
	if err := <-errc; !errors.Is(err, dlock.ErrNotObtained) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled waiter: %v, want ErrNotObtained and context.Canceled", err)
	}
	queued(t, rdb, key, 0)
	if _, err := c.ObtainFair(ctx, key, 5*time.Second, &dlock.Options{Wait: 50 * time.Millisecond}); !errors.Is(err, dlock.ErrNotObtained) {
		t.Errorf("waiter whose Wait ran out: %v, want ErrNotObtained", err)
	}
	queued(t, rdb, key, 0)
	_ = holder.Release(ctx)

	rl := dlock.NewRedlock([]redis.UniversalClient{rdb}, nil)
	defer rl.Close()
	if _, err := rl.ObtainFair(ctx, key, time.Second, nil); !errors.Is(err, dlock.ErrFairRedlock) {
		t.Errorf("ObtainFair under Redlock: %v, want ErrFairRedlock", err)
	}
}

// TestFairNextWaiterSince: a fair lock knows when the waiter queued behind it started
// waiting, in this process's clock, and knows when nobody is.
func TestFairNextWaiterSince(t *testing.T) {
	ctx := context.Background()
	rdb, key, c, holder := fairHeld(t)
	if _, ok := holder.NextWaiterSince(); ok {
		t.Error("the first holder has a waiter behind it")
	}
	locks := make(chan *dlock.Lock, 2)
	var started [2]time.Time
	for i := range 2 {
		started[i] = time.Now()
		go func() {
			l, err := c.ObtainFair(ctx, key, 5*time.Second, &dlock.Options{Wait: 10 * time.Second})
			if err != nil {
				t.Error(err)
			}
			locks <- l
		}()
		queued(t, rdb, key, int64(i+1))
		time.Sleep(100 * time.Millisecond)
	}
	_ = holder.Release(ctx)
	first := <-locks
	if first == nil {
		t.FailNow()
	}
	since, ok := first.NextWaiterSince()
	if d := since.Sub(started[1]); !ok || d < -50*time.Millisecond || d > 100*time.Millisecond {
		t.Errorf("next waiter since %v (ok %v), want about %v", since, ok, started[1])
	}
	_ = first.Release(ctx)
	last := <-locks
	if last == nil {
		t.FailNow()
	}
	if _, ok := last.NextWaiterSince(); ok {
		t.Error("the last holder has a waiter behind it")
	}
	_ = last.Release(ctx)
}
