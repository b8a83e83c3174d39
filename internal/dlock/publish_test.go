package dlock_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv"
)

// releases subscribes to key's release channel and returns a count of the release
// notifications published on it since. The count publishes a marker of its own and waits for
// it first: one channel delivers in order, so every notification published before the call
// has arrived by then.
func releases(t *testing.T, rdb redis.UniversalClient, key string) func() int64 {
	t.Helper()
	ctx, channel := context.Background(), dlock.ReleaseChannel(key)
	sub := rdb.Subscribe(ctx, channel)
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	var n, markers atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for msg := range sub.Channel() {
			if msg.Payload == "test marker" {
				markers.Add(1)
			} else {
				n.Add(1)
			}
		}
	}()
	t.Cleanup(func() { _ = sub.Close(); <-done })
	return func() int64 {
		t.Helper()
		want := markers.Load() + 1
		if err := rdb.Publish(ctx, channel, "test marker").Err(); err != nil {
			t.Fatalf("publish: %v", err)
		}
		testenv.Eventually(t, 5*time.Second, "the test's marker", func() bool { return markers.Load() >= want })
		return n.Load()
	}
}

// A release publishes only when someone waits for the key in Redis: a failed acquire marks
// the key as waited for, and the release that publishes takes the mark away.
func TestReleasePublishesOnlyToWaiters(t *testing.T) {
	rdb, key, c := oneKey(t, "publish")
	ctx, published := context.Background(), releases(t, rdb, key)
	for range 20 {
		cycle(t, c, key)
	}
	if n := published(); n != 0 {
		t.Fatalf("%d release notifications after 20 uncontended cycles, want none", n)
	}

	holder := mustObtain(t, c, key, time.Minute, nil)
	other := newClient(t, rdb, nil)
	got := make(chan *dlock.Lock, 1)
	go func() {
		l, err := other.Obtain(ctx, key, time.Minute, &dlock.Options{Wait: 30 * time.Second, MinBackoff: time.Minute})
		if err != nil {
			t.Errorf("Obtain: %v", err)
		}
		got <- l
	}()
	mark := dlock.ReleaseChannel(key)
	testenv.Eventually(t, 10*time.Second, "the waiter's mark", func() bool { return rdb.Exists(ctx, mark).Val() == 1 })
	mustRelease(t, holder)
	l := <-got // in time only if woken: its backoff is a minute
	if n := published(); n != 1 {
		t.Fatalf("%d release notifications for one release with a waiter, want 1", n)
	}
	if n := rdb.Exists(ctx, mark).Val(); n != 0 {
		t.Fatalf("the waiter's mark is still there after the release that woke it")
	}
	if l != nil {
		mustRelease(t, l)
	}
	if n := published(); n != 1 {
		t.Fatalf("%d release notifications after the woken waiter's release, want still 1", n)
	}
}
