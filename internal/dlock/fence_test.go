package dlock_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
)

// cycle obtains and releases key once and returns the fence.
func cycle(t *testing.T, c *dlock.Client, key string) int64 {
	t.Helper()
	ctx := context.Background()
	l, err := c.Obtain(ctx, key, time.Second, &dlock.Options{Wait: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	return l.Fence()
}

func TestFencesIncreaseAcrossClients(t *testing.T) {
	rdb, key, c := oneKey(t, "fences")
	clients := []*dlock.Client{c, newClient(t, rdb, nil), newClient(t, rdb, nil)}
	var last int64
	for i := range 60 {
		f := cycle(t, clients[i%len(clients)], key)
		if f <= last {
			t.Fatalf("fence %d = %d after %d: not increasing", i, f, last)
		}
		last = f
	}
}

func TestFenceFollowsServerClock(t *testing.T) {
	rdb, key, c := oneKey(t, "clock")
	now, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	f := cycle(t, c, key)
	if d := time.Duration(f-now.UnixMicro()) * time.Microsecond; d < 0 || d > 5*time.Second {
		t.Fatalf("fence %d is %v from the server's clock in µs", f, d)
	}
	// The fence travels as an integer reply converted from Lua's double: it must be the
	// counter's value to the unit, not rounded (a 16-digit number).
	stored, err := rdb.Get(context.Background(), dlock.FenceKey(key)).Int64()
	if err != nil || stored != f {
		t.Fatalf("fence %d, fence key holds %d (%v)", f, stored, err)
	}
	// The next fence is the clock again, not the last one plus one.
	g := cycle(t, c, key)
	later, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	if g <= f || g > later.UnixMicro() {
		t.Fatalf("next fence %d, want above %d and at most the clock after it, %d", g, f, later.UnixMicro())
	}
}

// taggedKey is oneKey for a lock key with a hash tag of its own, with its fence key.
func taggedKey(t *testing.T, name string) (redis.UniversalClient, *dlock.Client, string, string) {
	t.Helper()
	rdb, tag, c := oneKey(t, name)
	key := "dlocktest:{" + tag + "}:lock"
	return rdb, c, key, dlock.FenceKey(key)
}

// Losing the fence key, as a Redis restart without persistence would, must
// not make fences go backwards; a last fence ahead of the clock is counted on.
func TestFenceSurvivesLostFenceKey(t *testing.T) {
	ctx := context.Background()
	rdb, c, key, fenceKey := taggedKey(t, "lost")

	f1 := cycle(t, c, key)
	rdb.Del(ctx, fenceKey)
	f2 := cycle(t, c, key)
	if f2 <= f1 {
		t.Fatalf("fence after losing the fence key = %d, want above %d", f2, f1)
	}

	ahead := f2 + int64(time.Hour/time.Microsecond)
	rdb.Set(ctx, fenceKey, strconv.FormatInt(ahead, 10), time.Hour)
	if f3 := cycle(t, c, key); f3 != ahead+1 {
		t.Fatalf("fence after %d = %d, want %d", ahead, f3, ahead+1)
	}
}

// A fence key that cannot be counted (not a number, or not a string at all)
// starts again from the server's clock instead of failing every acquisition.
func TestFenceRestartsFromUnreadableFenceKey(t *testing.T) {
	ctx := context.Background()
	rdb, c, key, fenceKey := taggedKey(t, "unreadable")
	last := cycle(t, c, key)
	for _, spoil := range []func() error{
		func() error { return rdb.Set(ctx, fenceKey, "x", 0).Err() },
		func() error { rdb.Del(ctx, fenceKey); return rdb.RPush(ctx, fenceKey, "x").Err() },
	} {
		if err := spoil(); err != nil {
			t.Fatal(err)
		}
		f := cycle(t, c, key)
		if f <= last {
			t.Fatalf("fence after spoiling the fence key = %d, want above %d", f, last)
		}
		if ttl, _ := rdb.PTTL(ctx, fenceKey).Result(); ttl <= 0 {
			t.Fatalf("restarted fence key PTTL = %v, want an expiry", ttl)
		}
		last = f
	}
}

// Every acquisition reuses the one fence key of the lock key, with a bounded
// expiry, and a release leaves nothing behind: keys do not pile up. (Until
// 2026-12-02 each release left a marker of its own for a retried call, 30 keys
// here for 5 s; release.lua leaves none now.)
func TestFenceKeyDoesNotGrow(t *testing.T) {
	ctx := context.Background()
	rdb, key, c := oneKey(t, "grow")
	for range 30 {
		cycle(t, c, key)
	}
	var fences int
	for _, k := range keysMatching(ctx, rdb, "*"+key+"*") {
		ttl, _ := rdb.PTTL(ctx, k).Result()
		switch {
		case k == "{"+key+"}:fence":
			fences++
			if ttl <= 0 || ttl > 7*24*time.Hour {
				t.Fatalf("fence key PTTL = %v, want at most 7 days", ttl)
			}
		default:
			t.Fatalf("key %q left after 30 acquisitions", k)
		}
	}
	if fences != 1 {
		t.Fatalf("%d fence keys left after 30 acquisitions, want 1", fences)
	}
}
