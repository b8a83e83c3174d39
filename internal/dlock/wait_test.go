package dlock_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
)

func TestWaitersTakeTurns(t *testing.T) {
	rdb, key, c := oneKey(t, "turns")
	clients := []*dlock.Client{c, newClient(t, rdb, nil), newClient(t, rdb, nil), newClient(t, rdb, nil)}
	takeTurns(t, clients, key, 5*time.Second, 20, 50)
}

func TestWaitCancelled(t *testing.T) {
	rdb, key, c := oneKey(t, "cancel")
	holder := mustObtain(t, newClient(t, rdb, nil), key, time.Minute, nil)
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
	ctx := context.Background()
	rdb, key, c := oneKey(t, "runsout")
	holder := mustObtain(t, c, key, time.Minute, nil)
	defer holder.Release(ctx)
	rec := &recorder{}
	start := time.Now()
	_, err := newClient(t, rdb, nil).Obtain(ctx, key, time.Second, &dlock.Options{Wait: 150 * time.Millisecond, Observer: rec})
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
	rdb, key, c := oneKey(t, "wake")
	holder := mustObtain(t, c, key, time.Minute, nil)
	time.AfterFunc(300*time.Millisecond, func() { _ = holder.Release(context.Background()) })
	obtainWoken(t, newClient(t, rdb, nil), key)
}

// A holder that never releases: the waiter retries when its ttl runs out
// rather than after its long backoff.
func TestWaitRetriesAtExpiry(t *testing.T) {
	rdb, key, c := oneKey(t, "expiry")
	mustObtain(t, c, key, 300*time.Millisecond, nil)
	obtainWoken(t, newClient(t, rdb, nil), key)
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
		// acquire.lua: 3 keys (lock, wait mark, fence) and 2 arguments; release.lua has 2
		// keys and 1 argument.
		isAcquire := strings.HasPrefix(cmd.Name(), "eval") && len(args) == 8 && args[3] == h.key && fmt.Sprint(args[2]) == "3"
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
	ctx := context.Background()
	_, key, holderClient := oneKey(t, "queue")
	hook := &inflight{key: key}
	counted := newRedis(t)
	counted.AddHook(hook)
	c := newClient(t, counted, nil)

	holder := mustObtain(t, holderClient, key, time.Minute, nil)
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
	ctx := context.Background()
	_, key, c := oneKey(t, "rdbclosed")
	holder := mustObtain(t, c, key, time.Minute, nil)
	defer holder.Release(ctx)
	own := dialRedis(t)
	waiter := newDlock(own, nil)
	time.AfterFunc(300*time.Millisecond, func() { _ = own.Close() })
	_, err := waiter.Obtain(ctx, key, time.Second, &dlock.Options{Wait: 5 * time.Second})
	if err == nil || errors.Is(err, dlock.ErrNotObtained) {
		t.Fatalf("Obtain = %v, want the closed client's error", err)
	}
	done := make(chan struct{})
	go func() { _ = waiter.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs after the Redis client was closed")
	}
}
