package dlock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv/faultproxy"
)

func TestObtainExactlyOneWinner(t *testing.T) {
	rdb, key, c := oneKey(t, "one")
	// Several Clients stand for several processes: their goroutines meet in
	// Redis, while goroutines of one Client also meet in its local queue.
	won := obtainAtOnce(t, []*dlock.Client{c, newClient(t, rdb, nil), newClient(t, rdb, nil)}, key, 100)
	if got, want := len(won), 1; got != want {
		t.Fatalf("winners = %d, want %d", got, want)
	}
	mustRelease(t, won[0])
}

func TestObtainSetsRandomTokenAndTTL(t *testing.T) {
	ctx := context.Background()
	rdb, key, c := oneKey(t, "a")
	a := mustObtain(t, c, key, time.Minute, nil)
	b := mustObtain(t, c, testKey(t, rdb, "b"), time.Minute, nil)
	if a.Token() == b.Token() || len(a.Token()) < 22 {
		t.Fatalf("tokens %q and %q: want distinct, 128 random bits", a.Token(), b.Token())
	}
	if got, _ := rdb.Get(ctx, a.Key()).Result(); got != a.Token() {
		t.Fatalf("value of %s = %q, want the token %q", a.Key(), got, a.Token())
	}
	ttl, err := a.TTL(ctx)
	if err != nil || ttl <= 50*time.Second || ttl > time.Minute {
		t.Fatalf("TTL = %v, %v; want about 1m", ttl, err)
	}
	if d := time.Until(a.Deadline()); d <= 50*time.Second || d > time.Minute {
		t.Fatalf("Deadline in %v, want a bit less than 1m", d)
	}
	mustRelease(t, a)
	mustRelease(t, b)
	if n, _ := rdb.Exists(ctx, a.Key()).Result(); n != 0 {
		t.Fatalf("key %s still exists after Release", a.Key())
	}
}

func TestObtainWithCallerToken(t *testing.T) {
	ctx := context.Background()
	rdb, key, c := oneKey(t, "tok")
	l := mustObtain(t, c, key, time.Minute, &dlock.Options{Token: "my-unique-token"})
	defer l.Release(ctx)
	if got, want := l.Token(), "my-unique-token"; got != want {
		t.Fatalf("Token = %q, want %q", got, want)
	}
	if got, _ := rdb.Get(ctx, l.Key()).Result(); got != "my-unique-token" {
		t.Fatalf("value = %q", got)
	}
}

func TestReleaseOfExpiredLockLeavesNewHolder(t *testing.T) {
	ctx := context.Background()
	rdb, key, c := oneKey(t, "expired")
	old := mustObtain(t, c, key, 50*time.Millisecond, nil)
	// The new holder waits for the old lock to expire.
	cur := mustObtain(t, c, key, time.Minute, &dlock.Options{Wait: 5 * time.Second})
	if err := old.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
		t.Fatalf("old Release = %v, want ErrNotHeld", err)
	}
	if err := old.Refresh(ctx, time.Minute); !errors.Is(err, dlock.ErrNotHeld) {
		t.Fatalf("old Refresh = %v, want ErrNotHeld", err)
	}
	if got, _ := rdb.Get(ctx, key).Result(); got != cur.Token() {
		t.Fatalf("value = %q, want the new holder's token %q", got, cur.Token())
	}
	if ttl, err := cur.TTL(ctx); err != nil || ttl < 50*time.Second {
		t.Fatalf("new holder's TTL = %v, %v; want untouched", ttl, err)
	}
	mustRelease(t, cur)
}

func TestRefresh(t *testing.T) {
	ctx := context.Background()
	rdb, key, c := oneKey(t, "refresh")
	l := mustObtain(t, c, key, time.Second, nil)
	before := l.Deadline()
	if err := l.Refresh(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if ttl, _ := rdb.PTTL(ctx, key).Result(); ttl < 50*time.Second {
		t.Fatalf("PTTL after Refresh = %v, want about 1m", ttl)
	}
	if !l.Deadline().After(before.Add(50 * time.Second)) {
		t.Fatalf("Deadline did not move on: %v then %v", before, l.Deadline())
	}
	if err := l.Refresh(ctx, 0); err == nil {
		t.Fatal("Refresh(0) succeeded")
	}
	rdb.Del(ctx, key)
	if err := l.Refresh(ctx, time.Minute); !errors.Is(err, dlock.ErrNotHeld) {
		t.Fatalf("Refresh of a deleted key = %v, want ErrNotHeld", err)
	}
	if n, _ := rdb.Exists(ctx, key).Result(); n != 0 {
		t.Fatal("Refresh re-created the key")
	}
	if _, err := l.TTL(ctx); !errors.Is(err, dlock.ErrNotHeld) {
		t.Fatalf("TTL = %v, want ErrNotHeld", err)
	}
	if err := l.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
		t.Fatalf("Release = %v, want ErrNotHeld", err)
	}
}

func TestReleaseTwice(t *testing.T) {
	rdb, key, _ := oneKey(t, "twice")
	rec := &recorder{}
	l := mustObtain(t, newClient(t, rdb, &dlock.ClientOptions{Observer: rec}), key, time.Minute, nil)
	mustRelease(t, l)
	if err := l.Release(context.Background()); !errors.Is(err, dlock.ErrNotHeld) {
		t.Fatalf("second Release = %v, want ErrNotHeld", err)
	}
	if got, want := rec.count(&rec.obtained), 1; got != want {
		t.Errorf("Obtained events = %d, want %d", got, want)
	}
	if got, want := rec.count(&rec.released), 1; got != want {
		t.Errorf("Released events = %d, want %d", got, want)
	}
}

func TestObtainRejectsBadArguments(t *testing.T) {
	ctx := context.Background()
	_, key, c := oneKey(t, "args")
	for _, tt := range []struct {
		key string
		ttl time.Duration
		opt *dlock.Options
	}{
		{"", time.Second, nil},
		{"a}b", time.Second, nil},
		{key, 0, nil},
		{key, 2 * time.Millisecond, nil}, // not above the default drift
		{key, time.Second, &dlock.Options{Drift: 2 * time.Second}}, // drift above ttl
	} {
		if _, err := c.Obtain(ctx, tt.key, tt.ttl, tt.opt); err == nil || errors.Is(err, dlock.ErrNotObtained) {
			t.Errorf("Obtain(%q, %v) = %v, want an argument error", tt.key, tt.ttl, err)
		}
	}
}

func TestObtainReportsRedisDownApartFromBusy(t *testing.T) {
	t.Parallel()
	p := faultproxy.New(t, "", redisAddr(t))
	rdb := newRedisAt(t, p.Addr(), func(o *redis.Options) { o.MaxRetries = -1 })
	c := newClient(t, rdb, nil)
	p.Down()
	_, err := c.Obtain(context.Background(), "dlocktest:down", time.Second, &dlock.Options{Wait: time.Second})
	if err == nil || errors.Is(err, dlock.ErrNotObtained) {
		t.Fatalf("Obtain with Redis down = %v, want a Redis error, not ErrNotObtained", err)
	}
}

func TestObtainAfterClose(t *testing.T) {
	t.Parallel()
	rdb := newRedis(t)
	c := newDlock(rdb, nil)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Obtain(context.Background(), testKey(t, rdb, "closed"), time.Second, nil); !errors.Is(err, dlock.ErrClosed) {
		t.Fatalf("Obtain after Close = %v, want ErrClosed", err)
	}
}

// A retried acquire call (its first reply lost) carries the same token and
// must get the same answer, fence included, rather than find the key busy.
func TestObtainRetryWithSameTokenIsIdempotent(t *testing.T) {
	rdb, key, c := oneKey(t, "retry")
	opt := &dlock.Options{Token: "retried-token"}
	first := mustObtain(t, c, key, time.Minute, opt)
	// Another Client: within one, the first lock's turn keeps a second
	// Obtain from reaching Redis at all.
	again := mustObtain(t, newClient(t, rdb, nil), key, time.Minute, opt)
	if first.Fence() != again.Fence() {
		t.Fatalf("fences %d and %d, want the same", first.Fence(), again.Fence())
	}
	mustRelease(t, again)
}
