package dlock_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestRaiseFenceAfterClockSetRightAndLoss: the case the clock alone cannot order. The Redis
// host's clock runs 60 s ahead while fences are minted (the store keeps the last), is set
// right, and the fence key is lost (a restart without persistence). The next acquisition's
// fence is then below the stored one, by about the step: the loss is real. RaiseFence, given
// the stored fence, mints one above it at once, and every later acquisition's is larger still.
func TestRaiseFenceAfterClockSetRightAndLoss(t *testing.T) {
	skipClusterSuite(t)
	t.Parallel()
	ctx := context.Background()
	s, clock := servers.StartRedisFakeClock(t)
	_, c := lossClient(t, s)
	clock.Step(t, time.Minute)
	ahead := mintN(t, c, 3)
	stored := slices.Max(ahead) // what PostgreSQL holds after the last write
	clock.Step(t, -time.Minute)
	s.Stop()
	s.Start()

	l := mustObtain(t, c, lossKey, 5*time.Second, &dlock.Options{Wait: 5 * time.Second})
	if l.Fence() >= stored {
		t.Fatalf("fence after the clock was set right and the key lost = %d, want below the stored %d: no loss to repair", l.Fence(), stored)
	}
	t.Logf("fence after the clock was set right and the key lost: %v below the stored one",
		time.Duration(stored-l.Fence())*time.Microsecond)
	began := time.Now()
	raised, err := l.RaiseFence(ctx, stored)
	if err != nil {
		t.Fatalf("RaiseFence: %v", err)
	}
	if raised <= stored || l.Fence() != raised {
		t.Fatalf("RaiseFence = %d, Fence() = %d, want one fence above the stored %d", raised, l.Fence(), stored)
	}
	t.Logf("raised above the stored fence in %v", time.Since(began).Round(time.Microsecond))
	mustRelease(t, l)
	assertFresh(t, []int64{raised}, mintN(t, c, 3))
}

// TestRaiseFenceKeepsFencesIncreasing: a raise never lowers a fence: a second raise to a
// floor ahead of the clock but below the first one still mints above the first.
func TestRaiseFenceKeepsFencesIncreasing(t *testing.T) {
	ctx := context.Background()
	_, c, key, _ := taggedKey(t, "raise")
	l := mustObtain(t, c, key, 5*time.Second, nil)
	defer mustRelease(t, l)
	floor := time.Now().Add(time.Hour).UnixMicro()
	high, err := l.RaiseFence(ctx, floor)
	if err != nil || high <= floor || l.Fence() != high {
		t.Fatalf("RaiseFence(%d) = %d, %v; Fence() = %d", floor, high, err, l.Fence())
	}
	if got, err := l.RaiseFence(ctx, floor-time.Minute.Microseconds()); err != nil || got <= high || l.Fence() != got {
		t.Fatalf("a lower raise = %d, %v; Fence() = %d; want above %d", got, err, l.Fence(), high)
	}
}

// TestRaiseFenceOfALostLock: a holder whose key was taken over, a stale holder, gets
// ErrNotHeld and its watched context the loss: it never gets a fence above the new holder's.
func TestRaiseFenceOfALostLock(t *testing.T) {
	ctx := context.Background()
	rdb, c, key, _ := taggedKey(t, "raiselost")
	stale := mustObtain(t, c, key, 5*time.Second, nil)
	wctx := stale.Watch(ctx)
	if err := rdb.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	fresh := mustObtain(t, c, key, 5*time.Second, &dlock.Options{Wait: 5 * time.Second})
	defer mustRelease(t, fresh)
	if _, err := stale.RaiseFence(ctx, fresh.Fence()); !errors.Is(err, dlock.ErrNotHeld) {
		t.Fatalf("RaiseFence of a lock taken over = %v, want ErrNotHeld", err)
	}
	if !errors.Is(context.Cause(wctx), dlock.ErrLost) {
		t.Fatalf("watched context's cause = %v, want ErrLost", context.Cause(wctx))
	}
	if stale.Fence() >= fresh.Fence() {
		t.Fatalf("stale fence %d not below the new holder's %d", stale.Fence(), fresh.Fence())
	}
	if err := stale.Release(ctx); !errors.Is(err, dlock.ErrNotHeld) {
		t.Fatalf("Release of the lost lock = %v", err)
	}
	if _, err := stale.RaiseFence(ctx, 1); !errors.Is(err, dlock.ErrNotHeld) {
		t.Fatalf("RaiseFence after Release = %v, want ErrNotHeld", err)
	}
}

// TestRaiseFenceOfAReadLock: a read lock's fence guards no write; raising it is refused.
func TestRaiseFenceOfAReadLock(t *testing.T) {
	skipRedlockSuite(t)
	_, c, key, _ := taggedKey(t, "raiseread")
	reader, err := c.RW(key).RLock(context.Background(), time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer mustRelease(t, reader)
	if _, err := reader.RaiseFence(context.Background(), time.Now().Add(time.Hour).UnixMicro()); err == nil {
		t.Fatal("RaiseFence of a read lock succeeded")
	}
}

// TestRedlockRaiseFence: on three nodes that all lost their fence keys, a raise mints above
// the floor on a majority, and the next acquisition, on any majority, is above it.
func TestRedlockRaiseFence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	set := newRedlockSet(t, 0)
	c := set.client(t, nil)
	const key = "rl:{raise}:lock"
	floor := time.Now().Add(time.Hour).UnixMicro() // a fence the nodes never minted
	l := mustObtain(t, c, key, 5*time.Second, nil)
	raised, err := l.RaiseFence(ctx, floor)
	if err != nil || raised <= floor {
		t.Fatalf("RaiseFence(%d) = %d, %v", floor, raised, err)
	}
	mustRelease(t, l)
	set.servers[0].Stop()
	if f := cycle(t, c, key); f <= raised {
		t.Fatalf("fence after the raise, one node down = %d, want above %d", f, raised)
	}
}

// TestRaiseFenceRefusesAFloorBehindTheClock: a floor the clock has passed is a fence minted
// after this lock's (a later holder's, on another master in a split brain) or one the next
// acquisition passes anyway: no raise, ErrFloorNotAhead, the fence and the lock unchanged.
func TestRaiseFenceRefusesAFloorBehindTheClock(t *testing.T) {
	ctx := context.Background()
	rdb, c, key, fenceKey := taggedKey(t, "behind")
	l := mustObtain(t, c, key, 5*time.Second, nil)
	defer mustRelease(t, l)
	floor := l.Fence() + 1000 // a later grant's, 1 ms after this one's: the clock is past it
	time.Sleep(5 * time.Millisecond)
	if _, err := l.RaiseFence(ctx, floor); !errors.Is(err, dlock.ErrFloorNotAhead) {
		t.Fatalf("RaiseFence past a floor behind the clock = %v, want ErrFloorNotAhead", err)
	}
	if got, _ := rdb.Get(ctx, fenceKey).Int64(); l.Fence() >= floor || got >= floor {
		t.Fatalf("fence %d, fence key %d after a refused raise, want both below %d", l.Fence(), got, floor)
	}
	if _, err := l.TTL(ctx); err != nil {
		t.Fatalf("lock after a refused raise: %v", err)
	}
}
