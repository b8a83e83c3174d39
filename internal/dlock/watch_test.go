package dlock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv/faultproxy"
)

// lossBound is how long after the fault a watched 200 ms lock must report its
// loss: one ttl, plus slack for a loaded machine.
const lossBound = 200*time.Millisecond + time.Second

func TestWatchKeepsLockAlive(t *testing.T) {
	ctx := context.Background()
	rdb, key, _ := oneKey(t, "alive")
	rec := &recorder{}
	l := mustObtain(t, newClient(t, rdb, &dlock.ClientOptions{Observer: rec}), key, 200*time.Millisecond, nil)
	wctx := l.Watch(ctx)
	if again := l.Watch(context.Background()); again != wctx {
		t.Fatal("second Watch returned another context")
	}
	keptFor(t, wctx, 1500*time.Millisecond, "while held")
	if got, _ := rdb.Get(ctx, l.Key()).Result(); got != l.Token() {
		t.Fatalf("after 1.5s the key holds %q, want the token", got)
	}
	mustRelease(t, l)
	if cause := context.Cause(wctx); !errors.Is(cause, context.Canceled) || errors.Is(cause, dlock.ErrLost) {
		t.Fatalf("cause after Release = %v, want context.Canceled", cause)
	}
	if n := rec.count(&rec.renewed); n < 4 {
		t.Fatalf("%d renewals in 1.5s of a 200ms lock", n)
	}
	if n := rec.count(&rec.lost); n != 0 {
		t.Fatalf("%d losses reported", n)
	}
}

func TestWatchDetectsDeletedKey(t *testing.T) {
	ctx := context.Background()
	rdb, key, c := oneKey(t, "deleted")
	rec := &recorder{}
	l := mustObtain(t, c, key, 200*time.Millisecond, &dlock.Options{Observer: rec})
	wctx := l.Watch(ctx)
	time.Sleep(100 * time.Millisecond)
	rdb.Del(ctx, l.Key())
	took := waitLost(t, wctx, lossBound)
	t.Logf("loss reported %v after the key was deleted", took)
	if err := l.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
		t.Fatalf("Release after loss = %v, want ErrNotHeld", err)
	}
	if n := rec.count(&rec.lost); n != 1 {
		t.Fatalf("Lost events = %d, want 1", n)
	}
}

func TestWatchDetectsUnreachableRedis(t *testing.T) {
	t.Parallel()
	for _, fault := range []string{"down", "hung"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			p := faultproxy.New(t, "", redisAddr(t))
			// Without ContextTimeoutEnabled go-redis waits ReadTimeout for a hung
			// server whatever the context says; the loss must come sooner.
			rdb := newRedisAt(t, p.Addr(), func(o *redis.Options) { o.ReadTimeout = 5 * time.Second })
			l := mustObtain(t, newClient(t, rdb, nil), testKey(t, newRedis(t), fault), 200*time.Millisecond, nil)
			wctx := l.Watch(ctx)
			time.Sleep(300 * time.Millisecond) // a few renewals
			if fault == "down" {
				p.Down()
			} else {
				p.Stall()
			}
			took := waitLost(t, wctx, lossBound)
			t.Logf("loss reported %v after Redis went %s", took, fault)
			p.Down() // fail the hung calls now rather than after ReadTimeout
			if err := l.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
				t.Fatalf("Release after loss = %v, want ErrNotHeld", err)
			}
		})
	}
}

func TestWatchStopsWithParent(t *testing.T) {
	rdb, key, c := oneKey(t, "parent")
	rec := &recorder{}
	l := mustObtain(t, c, key, 200*time.Millisecond, &dlock.Options{Observer: rec})
	parent, cancel := context.WithCancel(context.Background())
	wctx := l.Watch(parent)
	cancel()
	waitDone(t, wctx, time.Second)
	if cause := context.Cause(wctx); errors.Is(cause, dlock.ErrLost) {
		t.Fatalf("cause = %v, want the parent's", cause)
	}
	time.Sleep(400 * time.Millisecond) // the key expires: no renewals any more
	if n, _ := rdb.Exists(context.Background(), l.Key()).Result(); n != 0 {
		t.Fatal("the key is still renewed after the parent ended")
	}
	if n := rec.count(&rec.lost); n != 0 {
		t.Fatalf("%d losses reported after the parent ended", n)
	}
	if err := l.Release(context.Background()); !errors.Is(err, dlock.ErrNotHeld) {
		t.Fatalf("Release of the expired lock = %v, want ErrNotHeld", err)
	}
}

func TestWatchMaxHold(t *testing.T) {
	ctx := context.Background()
	rdb, key, c := oneKey(t, "maxhold")
	start := time.Now()
	l := mustObtain(t, c, key, 200*time.Millisecond, &dlock.Options{MaxHold: 600 * time.Millisecond})
	wctx := l.Watch(ctx)
	waitDone(t, wctx, 3*time.Second)
	held := time.Since(start)
	cause := context.Cause(wctx)
	if !errors.Is(cause, dlock.ErrLost) || !strings.Contains(cause.Error(), "MaxHold") {
		t.Fatalf("cause = %v, want ErrLost for MaxHold", cause)
	}
	if held < 400*time.Millisecond {
		t.Fatalf("lost after %v, long before MaxHold", held)
	}
	time.Sleep(100 * time.Millisecond)
	if n, _ := rdb.Exists(ctx, l.Key()).Result(); n != 0 {
		t.Fatal("the key outlived MaxHold")
	}
	t.Logf("held %v with MaxHold 600ms", held)
}

func TestWatchAfterRelease(t *testing.T) {
	_, key, c := oneKey(t, "late")
	l := mustObtain(t, c, key, time.Second, nil)
	mustRelease(t, l)
	wctx := l.Watch(context.Background())
	if cause := context.Cause(wctx); !errors.Is(cause, dlock.ErrNotHeld) {
		t.Fatalf("Watch after Release: cause = %v, want ErrNotHeld", cause)
	}
}

// TestNoGoroutineLeaks runs alone (not in parallel): after Release and Close,
// no goroutine of dlock or go-redis may remain.
func TestNoGoroutineLeaks(t *testing.T) {
	ctx := context.Background()
	if len(ownedGoroutines()) > 0 {
		t.Skip("goroutines of earlier tests still running")
	}
	func() {
		rdb := dialRedis(t)
		defer rdb.Close()
		key := testKey(t, rdb, "leak")
		holder, waiter := newDlock(rdb, nil), newDlock(rdb, nil)
		defer holder.Close()
		defer waiter.Close()
		l, err := holder.Obtain(ctx, key, 200*time.Millisecond, nil)
		if err != nil {
			t.Fatal(err)
		}
		l.Watch(ctx)
		time.AfterFunc(200*time.Millisecond, func() { _ = l.Release(ctx) })
		l2, err := waiter.Obtain(ctx, key, time.Second, &dlock.Options{Wait: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		l2.Watch(ctx)
		if err := l2.Release(ctx); err != nil {
			t.Fatal(err)
		}
		rdb.Del(ctx, "{"+key+"}:fence") // testKey cleans up with a closed client
	}()
	if leaks := leakedGoroutines(3 * time.Second); len(leaks) > 0 {
		t.Fatalf("leaked goroutines:\n\n%s", strings.Join(leaks, "\n\n"))
	}
}
