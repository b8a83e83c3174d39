package dlock_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/dlock"
)

// The steps that many tests take on a lock: each fails the test when the step
// does not go as it should. They call t.Fatal, so call them from the test's
// own goroutine only.

// mustObtain obtains key on c, or fails the test.
func mustObtain(t testing.TB, c *dlock.Client, key string, ttl time.Duration, opt *dlock.Options) *dlock.Lock {
	t.Helper()
	l, err := c.Obtain(context.Background(), key, ttl, opt)
	if err != nil {
		t.Fatalf("Obtain %s: %v", key, err)
	}
	return l
}

// mustRelease releases l, or fails the test.
func mustRelease(t testing.TB, l *dlock.Lock) {
	t.Helper()
	if err := l.Release(context.Background()); err != nil {
		t.Fatalf("Release %s: %v", l.Key(), err)
	}
}

// waitDone waits up to limit for ctx to end and returns how long it took, or
// fails the test.
func waitDone(t *testing.T, ctx context.Context, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-ctx.Done():
		return time.Since(start)
	case <-time.After(limit):
		t.Fatalf("context still not done after %v", limit)
		return 0
	}
}

// waitLost waits up to limit for the watched context wctx to end with a cause
// that wraps ErrLost, and returns how long it took, or fails the test.
func waitLost(t *testing.T, wctx context.Context, limit time.Duration) time.Duration {
	t.Helper()
	took := waitDone(t, wctx, limit)
	if cause := context.Cause(wctx); !errors.Is(cause, dlock.ErrLost) {
		t.Fatalf("cause = %v, want ErrLost", cause)
	}
	return took
}

// keptFor sleeps for d, time for several renewals, and fails the test if the
// watched context wctx ended meanwhile; during says what the lock went through.
func keptFor(t *testing.T, wctx context.Context, d time.Duration, during string) {
	t.Helper()
	time.Sleep(d)
	if cause := context.Cause(wctx); cause != nil {
		t.Fatalf("watched context ended %s: %v", during, cause)
	}
}

// obtainWoken obtains key on c with a 10 s Wait but a backoff of a minute, so
// that it gets the key in time only if something other than its backoff sends
// it back to Redis (a release notification, the holder's expiry). It logs how
// long that took and releases the lock.
func obtainWoken(t *testing.T, c *dlock.Client, key string) {
	t.Helper()
	slow := &dlock.Options{Wait: 10 * time.Second, MinBackoff: time.Minute, MaxBackoff: time.Minute}
	start := time.Now()
	l := mustObtain(t, c, key, time.Second, slow)
	t.Logf("got the key %v after the wait began", time.Since(start))
	mustRelease(t, l)
}

// obtainAtOnce has n goroutines, spread over clients, try key at the same
// moment (ttl 10 s, no Wait), and returns the locks they won. An error other
// than ErrNotObtained fails the test.
func obtainAtOnce(t *testing.T, clients []*dlock.Client, key string, n int) []*dlock.Lock {
	t.Helper()
	var (
		wg    sync.WaitGroup
		start = make(chan struct{})
		mu    sync.Mutex
		won   []*dlock.Lock
	)
	for i := range n {
		wg.Go(func() {
			<-start
			l, err := clients[i%len(clients)].Obtain(context.Background(), key, 10*time.Second, nil)
			switch {
			case err == nil:
				mu.Lock()
				won = append(won, l)
				mu.Unlock()
			case !errors.Is(err, dlock.ErrNotObtained):
				t.Errorf("Obtain: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	return won
}

// takeTurns has workers goroutines, spread over clients, each obtain key
// rounds times (with ttl and a Wait of a minute) and, under the lock, add one
// to a counter in three steps (load, yield, store). It fails the test if two
// goroutines hold the key at once, if an increment is lost, or if the fences
// are not strictly increasing in the order the holders had them.
func takeTurns(t *testing.T, clients []*dlock.Client, key string, ttl time.Duration, workers, rounds int) {
	t.Helper()
	ctx := context.Background()
	var (
		wg      sync.WaitGroup
		counter atomic.Int64 // incremented non-atomically: Load, yield, Store
		inside  atomic.Int32 // holders in the critical section
		mu      sync.Mutex
		fences  []int64 // in the order the holders got the lock
	)
	for i := range workers {
		wg.Go(func() {
			c := clients[i%len(clients)]
			for range rounds {
				l, err := c.Obtain(ctx, key, ttl, &dlock.Options{Wait: time.Minute})
				if err != nil {
					t.Errorf("Obtain: %v", err)
					return
				}
				if n := inside.Add(1); n != 1 {
					t.Errorf("%d holders at once", n)
				}
				mu.Lock()
				fences = append(fences, l.Fence())
				mu.Unlock()
				v := counter.Load()
				runtime.Gosched()
				counter.Store(v + 1)
				inside.Add(-1)
				if err := l.Release(ctx); err != nil {
					t.Errorf("Release: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got, want := counter.Load(), int64(workers*rounds); got != want {
		t.Fatalf("counter = %d, want %d", got, want)
	}
	for i := 1; i < len(fences); i++ {
		if fences[i] <= fences[i-1] {
			t.Fatalf("fence %d = %d after %d: not increasing", i, fences[i], fences[i-1])
		}
	}
}
