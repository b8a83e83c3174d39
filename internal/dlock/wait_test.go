package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
)

func TestWaitersTakeTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := newRedis(t)
	key := testKey(t, rdb, "turns")
	clients := []*dlock.Client{newClient(t, rdb, nil), newClient(t, rdb, nil), newClient(t, rdb, nil), newClient(t, rdb, nil)}
	const workers, rounds = 20, 50

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
				l, err := c.Obtain(ctx, key, 5*time.Second, &dlock.Options{Wait: time.Minute})
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

func TestWaitCancelled(t *testing.T) {
	t.Parallel()
	rdb := newRedis(t)
	key := testKey(t, rdb, "cancel")
	c := newClient(t, rdb, nil)
	holder, err := newClient(t, rdb, nil).Obtain(context.Background(), key, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release(context.Background())

	for _, tt := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		want error
	}{
		{"canceled", func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			return ctx, cancel
		}, context.Canceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 100*time.Millisecond)
		}, context.DeadlineExceeded},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := tt.ctx()
			defer cancel()
			// Two waiters: one competes in Redis, one queues locally behind it.
			errs := make(chan error, 2)
			for range 2 {
				go func() {
					_, err := c.Obtain(ctx, key, time.Second, &dlock.Options{Wait: time.Minute})
					errs <- err
				}()
			}
			for range 2 {
				err := <-errs
				if !errors.Is(err, dlock.ErrNotObtained) || !errors.Is(err, tt.want) {
					t.Errorf("Obtain = %v, want ErrNotObtained and %v", err, tt.want)
				}
			}
		})
	}
}

func TestWaitRunsOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := newRedis(t)
	key := testKey(t, rdb, "runsout")
	holder, err := newClient(t, rdb, nil).Obtain(ctx, key, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release(ctx)
	rec := &recorder{}
	start := time.Now()
	_, err = newClient(t, rdb, nil).Obtain(ctx, key, time.Second, &dlock.Options{Wait: 150 * time.Millisecond, Observer: rec})
	if !errors.Is(err, dlock.ErrNotObtained) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Obtain = %v, want ErrNotObtained alone", err)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Fatalf("gave up after %v, before Wait", waited)
	}
	if rec.count(&rec.contended) < 2 || rec.count(&rec.notObtained) != 1 {
		t.Fatalf("contended %d, notObtained %d: want several and 1", rec.count(&rec.contended), rec.count(&rec.notObtained))
	}
}

// A waiter whose backoff is far longer than its Wait can only get the lock in
// time if the release notification wakes it.
func TestWaitWokenByRelease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := newRedis(t)
	key := testKey(t, rdb, "wake")
	holder, err := newClient(t, rdb, nil).Obtain(ctx, key, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(300*time.Millisecond, func() { _ = holder.Release(ctx) })
	slow := &dlock.Options{Wait: 10 * time.Second, MinBackoff: time.Minute, MaxBackoff: time.Minute}
	start := time.Now()
	l, err := newClient(t, rdb, nil).Obtain(ctx, key, time.Second, slow)
	if err != nil {
		t.Fatalf("Obtain: %v", err)
	}
	t.Logf("woken %v after the wait began", time.Since(start))
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A holder that never releases: the waiter retries when its ttl runs out
// rather than after its long backoff.
func TestWaitRetriesAtExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := newRedis(t)
	key := testKey(t, rdb, "expiry")
	if _, err := newClient(t, rdb, nil).Obtain(ctx, key, 300*time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	slow := &dlock.Options{Wait: 10 * time.Second, MinBackoff: time.Minute, MaxBackoff: time.Minute}
	l, err := newClient(t, rdb, nil).Obtain(ctx, key, time.Second, slow)
	if err != nil {
		t.Fatalf("Obtain: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// inflight counts the acquire calls a Redis client has under way for a key.
type inflight struct {
	key       string
	cur, peak atomic.Int32
	calls     atomic.Int32
}

func (h *inflight) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *inflight) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *inflight) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		isAcquire := strings.HasPrefix(cmd.Name(), "eval") && len(args) > 3 && args[3] == h.key && fmt.Sprint(args[2]) == "2"
		if !isAcquire {
			return next(ctx, cmd)
		}
		h.calls.Add(1)
		n := h.cur.Add(1)
		defer h.cur.Add(-1)
		for p := h.peak.Load(); n > p && !h.peak.CompareAndSwap(p, n); p = h.peak.Load() {
		}
		return next(ctx, cmd)
	}
}

func TestWaitersQueueLocally(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := newRedis(t)
	key := testKey(t, rdb, "queue")
	hook := &inflight{key: key}
	counted := newRedis(t)
	counted.AddHook(hook)
	c := newClient(t, counted, nil)

	holder, err := newClient(t, rdb, nil).Obtain(ctx, key, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(300*time.Millisecond, func() { _ = holder.Release(ctx) })
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			l, err := c.Obtain(ctx, key, time.Second, &dlock.Options{Wait: 30 * time.Second})
			if err != nil {
				t.Errorf("Obtain: %v", err)
				return
			}
			time.Sleep(5 * time.Millisecond)
			if err := l.Release(ctx); err != nil {
				t.Errorf("Release: %v", err)
			}
		})
	}
	wg.Wait()
	if got := hook.peak.Load(); got != 1 {
		t.Fatalf("peak acquire calls under way at once = %d, want 1", got)
	}
	t.Logf("%d acquire calls for 16 waiters", hook.calls.Load())
}

// Closing the Redis client under a waiting Client ends the wait with an
// error, and the Client still closes.
func TestRedisClientClosedWhileWaiting(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := newRedis(t)
	key := testKey(t, rdb, "rdbclosed")
	holder, err := newClient(t, rdb, nil).Obtain(ctx, key, time.Minute, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Release(ctx)
	own := dialRedis(t)
	c := newDlock(own, nil)
	time.AfterFunc(300*time.Millisecond, func() { _ = own.Close() })
	_, err = c.Obtain(ctx, key, time.Second, &dlock.Options{Wait: 5 * time.Second})
	if err == nil || errors.Is(err, dlock.ErrNotObtained) {
		t.Fatalf("Obtain = %v, want the closed client's error", err)
	}
	done := make(chan struct{})
	go func() { _ = c.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs after the Redis client was closed")
	}
}
