package dlock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv"
)

// cohortKey is oneKey with Clients that hand the lock over (ClientOptions.Cohort).
func cohortKey(t *testing.T, name string, cohort, clients int) (redis.UniversalClient, string, []*dlock.Client) {
	t.Helper()
	rdb, key, _ := oneKey(t, name)
	cs := make([]*dlock.Client, clients)
	for i := range cs {
		cs[i] = newClient(t, rdb, &dlock.ClientOptions{Cohort: cohort})
	}
	return rdb, key, cs
}

// queuedWaiter obtains key on c in a goroutine (Wait 30 s; token, if not empty, is its own Options.Token), once it is queued
// behind the key's holder; the channel delivers the lock, or nil after an error (reported).
func queuedWaiter(t *testing.T, c *dlock.Client, key, token string) <-chan *dlock.Lock {
	t.Helper()
	got := make(chan *dlock.Lock, 1)
	go func() {
		l, err := c.Obtain(context.Background(), key, 5*time.Second, &dlock.Options{Wait: 30 * time.Second, Token: token})
		if err != nil {
			t.Errorf("Obtain: %v", err)
		}
		got <- l
	}()
	testenv.Eventually(t, 10*time.Second, "the waiter to queue", func() bool { return c.QueuedFor(key) == 1 })
	return got
}

// TestCohortTakeTurns: with handoffs on, holders over three Clients never overlap, no
// increment is lost, and every holder's fence is larger than the one before.
func TestCohortTakeTurns(t *testing.T) {
	_, key, clients := cohortKey(t, "cohort-turns", 4, 3)
	takeTurns(t, clients, key, 5*time.Second, 24, 20)
}

// TestCohortHandsOver: goroutines of one Client queued behind a holder get the lock handed
// over: each holder has its own token in Redis and a larger fence. None of them waits in
// Redis (the local queue), and nobody else does, so no release is published.
func TestCohortHandsOver(t *testing.T) {
	skipRedlockSuite(t) // a Redlock Client never hands over
	rdb, key, clients := cohortKey(t, "cohort-hand", 3, 1)
	c, ctx := clients[0], context.Background()
	published := releases(t, rdb, key)
	first := mustObtain(t, c, key, 5*time.Second, nil)
	const waiters = 6
	locks := make(chan *dlock.Lock, waiters)
	var wg sync.WaitGroup
	for range waiters {
		wg.Go(func() {
			l, err := c.Obtain(ctx, key, 5*time.Second, &dlock.Options{Wait: 30 * time.Second})
			if err != nil {
				t.Errorf("Obtain: %v", err)
				return
			}
			locks <- l
		})
	}
	testenv.Eventually(t, 10*time.Second, "the waiters to queue", func() bool {
		return c.QueuedFor(key) == waiters
	})
	fence := first.Fence()
	mustRelease(t, first)
	for range waiters {
		l := <-locks
		if got := rdb.Get(ctx, key).Val(); got != l.Token() {
			t.Errorf("key holds %q, the holder's token is %q", got, l.Token())
		}
		if l.Fence() <= fence {
			t.Errorf("fence %d after %d: not increasing", l.Fence(), fence)
		}
		fence = l.Fence()
		mustRelease(t, l)
	}
	wg.Wait()
	if n := published(); n != 0 {
		t.Errorf("%d release notifications with nobody waiting in Redis", n)
	}
	if n, err := rdb.Exists(ctx, key).Result(); err != nil || n != 0 {
		t.Errorf("key left after the last release: %d, %v", n, err)
	}
}

// TestCohortBound: a Client whose goroutines always have another queued keeps handing the
// lock around; another Client still gets it, because at most Cohort handoffs follow each
// other. The negative control: with an unbounded cohort, the other Client gets nothing.
// The control may see the lock escape by design now and then: cohorting hands over only to a
// goroutine queued at the Release, and when a loaded machine keeps the busy goroutines away
// between their Release and their next Obtain, the queue empties and the holder releases in
// Redis, where the other Client can win (the likely cause of the one failure seen, in the
// Redis Cluster suite of a loaded CI run). It passes when one of three tries shows the other
// Client starved.
func TestCohortBound(t *testing.T) {
	skipRedlockSuite(t)
	t.Run("bounded", func(t *testing.T) {
		t.Parallel()
		if got, err := otherGetsIn(t, 4, 30*time.Second); !got {
			t.Errorf("the other Client did not obtain the lock beside a bounded cohort: %v", err)
		}
	})
	t.Run("unbounded (control)", func(t *testing.T) {
		t.Parallel()
		for try := range 3 {
			if got, _ := otherGetsIn(t, 1<<30, time.Second); !got {
				return
			}
			t.Logf("try %d: the other Client obtained the lock beside an unbounded cohort", try+1)
		}
		t.Errorf("the other Client obtained the lock beside an unbounded cohort in 3 tries of 3")
	})
}

// otherGetsIn has 8 goroutines of one Client (handing over up to cohort times in a row)
// take a key in turns, and reports whether a second Client obtains it within wait (a bound
// on a hung test, not a speed), with Obtain's error.
func otherGetsIn(t *testing.T, cohort int, wait time.Duration) (bool, error) {
	t.Helper()
	rdb := newRedis(t)
	key := testKey(t, rdb, "cohort-bound")
	busy := newClient(t, rdb, &dlock.ClientOptions{Cohort: cohort})
	other := newClient(t, rdb, &dlock.ClientOptions{Cohort: cohort})
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	for range 8 {
		wg.Go(func() {
			for ctx.Err() == nil {
				l, err := busy.Obtain(ctx, key, 5*time.Second, &dlock.Options{Wait: time.Minute})
				if err != nil {
					continue // cancelled
				}
				time.Sleep(time.Millisecond) // the work under the lock
				_ = l.Release(context.Background())
			}
		})
	}
	testenv.Eventually(t, 10*time.Second, "the busy Client's goroutines to queue", func() bool {
		return busy.QueuedFor(key) >= 4
	})
	start := time.Now()
	l, err := other.Obtain(context.Background(), key, 5*time.Second, &dlock.Options{Wait: wait})
	t.Logf("the other Client waited %v: %v", time.Since(start).Round(time.Millisecond), err)
	if l != nil {
		mustRelease(t, l)
	}
	return err == nil, err
}

// TestCohortLostNotHandedOver: a holder whose key is gone from Redis hands nothing over:
// its Release answers ErrNotHeld, as the compare-and-delete does, and the waiter takes the
// lock in Redis with a larger fence.
func TestCohortLostNotHandedOver(t *testing.T) {
	skipRedlockSuite(t)
	rdb, key, clients := cohortKey(t, "cohort-lost", 4, 1)
	c, ctx := clients[0], context.Background()
	held := mustObtain(t, c, key, 5*time.Second, nil)
	got := queuedWaiter(t, c, key, "")
	if err := rdb.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	if err := held.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
		t.Errorf("Release of a deleted key = %v, want ErrNotHeld", err)
	}
	l := <-got
	if l == nil {
		return
	}
	if l.Fence() <= held.Fence() {
		t.Errorf("fence %d after %d: not increasing", l.Fence(), held.Fence())
	}
	mustRelease(t, l)
}

// TestCohortGrantNotTaken: a lock handed over to a waiter that cannot take it (it chose its
// own token) or that gave up is released in Redis: the waiter, or another Client, gets the
// key in Redis, and nothing is left held.
func TestCohortGrantNotTaken(t *testing.T) {
	skipRedlockSuite(t)
	rdb, key, clients := cohortKey(t, "cohort-left", 4, 2)
	c, ctx := clients[0], context.Background()

	held := mustObtain(t, c, key, 5*time.Second, nil)
	got := queuedWaiter(t, c, key, "own-token-0123456789")
	mustRelease(t, held)
	if l := <-got; l != nil {
		if l.Token() != "own-token-0123456789" {
			t.Errorf("the waiter's token is %q, not its own", l.Token())
		}
		mustRelease(t, l)
	}

	held = mustObtain(t, c, key, 5*time.Second, nil)
	wctx, cancel := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() {
		l, err := c.Obtain(wctx, key, 5*time.Second, &dlock.Options{Wait: 30 * time.Second})
		if l != nil {
			_ = l.Release(ctx) // it took the grant before it saw the cancellation
		}
		left <- err
	}()
	testenv.Eventually(t, 10*time.Second, "the waiter to queue", func() bool { return c.QueuedFor(key) == 1 })
	cancel()
	mustRelease(t, held) // may hand over to the waiter that is leaving
	<-left
	l := mustObtain(t, clients[1], key, 5*time.Second, &dlock.Options{Wait: 10 * time.Second})
	mustRelease(t, l)
	testenv.Eventually(t, 5*time.Second, "the key to be free", func() bool { return rdb.Exists(ctx, key).Val() == 0 })
}
