package dlock_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/dlock"
)

// TestMultiAllOrNothing: with one key of three held elsewhere, ObtainMulti fails when its
// wait runs out and leaves none of the three held by it; once the key is free it takes all
// three, each with a fence, and releases all three.
func TestMultiAllOrNothing(t *testing.T) {
	ctx := context.Background()
	rdb, base, c := oneKey(t, "multi")
	keys := []string{base + ":c", base + ":a", base + ":b"}
	held := mustObtain(t, newClient(t, rdb, nil), keys[2], 5*time.Second, nil) // ":b", taken second in order
	if _, err := c.ObtainMulti(ctx, keys, 5*time.Second, &dlock.Options{Wait: 100 * time.Millisecond}); !errors.Is(err, dlock.ErrNotObtained) {
		t.Fatalf("ObtainMulti with a key held elsewhere = %v, want ErrNotObtained", err)
	}
	for _, k := range []string{keys[0], keys[1]} {
		if n := rdb.Exists(ctx, k).Val(); n != 0 {
			t.Errorf("%s left held after the failure", k)
		}
	}
	_ = held.Release(ctx)
	m, err := c.ObtainMulti(ctx, keys, 5*time.Second, &dlock.Options{Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	locks := m.Locks()
	if len(locks) != 3 || locks[0].Key() != base+":a" || locks[2].Key() != base+":c" || locks[1].Fence() == 0 {
		t.Fatalf("locks %v, want three in key order, fenced", locks)
	}
	if err := m.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, k := range keys { // one at a time: on a cluster they may be in different slots
		if n := rdb.Exists(ctx, k).Val(); n != 0 {
			t.Errorf("%s held after Release", k)
		}
	}
	if _, err := c.ObtainMulti(ctx, []string{base, base}, time.Second, nil); err == nil {
		t.Error("a repeated key was accepted")
	}
	if _, err := c.ObtainMulti(ctx, nil, time.Second, nil); err == nil {
		t.Error("no key was accepted")
	}
}

// TestMultiNoDeadlock: 16 goroutines over two Clients take overlapping sets of three keys
// out of four, each set listed in a different order, 20 times each: every call succeeds
// (nobody waits for ever on a key held by someone waiting on it), and no key ever has two
// holders at once.
func TestMultiNoDeadlock(t *testing.T) {
	ctx := context.Background()
	rdb, base, c := oneKey(t, "multi")
	all := []string{base + ":1", base + ":2", base + ":3", base + ":4"}
	sets := [][]string{
		{all[0], all[1], all[2]}, {all[2], all[1], all[0]}, {all[3], all[2], all[1]}, {all[1], all[3], all[0]},
	}
	clients := []*dlock.Client{c, newClient(t, rdb, nil)}
	holders := make([]atomic.Int32, len(all))
	index := map[string]int{}
	for i, k := range all {
		index[k] = i
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for range 20 {
				set := sets[g%len(sets)]
				m, err := clients[g%2].ObtainMulti(ctx, set, 5*time.Second, &dlock.Options{Wait: 20 * time.Second})
				if err != nil {
					t.Error(err)
					return
				}
				for _, k := range set {
					if holders[index[k]].Add(1) != 1 {
						t.Errorf("%s has two holders", k)
					}
				}
				for _, k := range set {
					holders[index[k]].Add(-1)
				}
				if err := m.Release(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestMultiWatchLost: the watched context of a multi-lock is cancelled, with a cause that
// wraps ErrLost, when any one of its keys is lost (here deleted behind its holder's back).
func TestMultiWatchLost(t *testing.T) {
	ctx := context.Background()
	rdb, base, c := oneKey(t, "multi")
	m, err := c.ObtainMulti(ctx, []string{base + ":x", base + ":y"}, 300*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	wctx := m.Watch(ctx)
	if err := rdb.Del(ctx, base+":y").Err(); err != nil {
		t.Fatal(err)
	}
	waitLost(t, wctx, 5*time.Second) // the loss of one key cancels the multi-lock's context
	_ = m.Release(ctx)
}

// TestDoMultiLost: DoMulti's error carries ErrLost when a key was lost while fn ran, beside
// fn's own error, as Do's does.
func TestDoMultiLost(t *testing.T) {
	ctx := context.Background()
	rdb, base, c := oneKey(t, "multi")
	errWork := errors.New("work cut short")
	err := c.DoMulti(ctx, []string{base + ":x", base + ":y"}, 300*time.Millisecond, nil,
		func(ctx context.Context, m *dlock.MultiLock) error {
			if err := rdb.Del(ctx, m.Locks()[1].Key()).Err(); err != nil {
				return err
			}
			<-ctx.Done() // the watchdog finds the key gone
			return errWork
		})
	if !errors.Is(err, dlock.ErrLost) || !errors.Is(err, errWork) {
		t.Fatalf("DoMulti = %v, want ErrLost joined with fn's error", err)
	}
}
