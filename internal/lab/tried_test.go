package lab_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/lab"
	"github.com/seckill/seckill/internal/testenv"
)

// TestTriedBoundsTheGrant: a lock held by another for 200 ms and then released is taken by
// a waiter whose Held.Tried, the start of the attempt that got it, lies within its Acquire
// call and no earlier than an attempt could have succeeded (the release, less a round trip):
// the lock histories' grant begins there, not at the start of the wait, and the checker's
// search stays small.
func TestTriedBoundsTheGrant(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	dl := dlock.New(rdb, nil)
	t.Cleanup(func() { dl.Close() })
	pg, _ := testenv.Postgres(t).DB()
	l := lab.New(rdb, lab.Clients{Dlocks: dl, Postgres: pg})
	ctx := context.Background()
	const hold = 200 * time.Millisecond
	for i, name := range []string{"mutex", "setnx", "setnx-expire", "del", "lease", "watchdog", "dlock", "redsync", "redislock", "postgres"} {
		t.Run(name, func(t *testing.T) {
			key := prefix + ":{p:" + strconv.Itoa(i) + "}:lock"
			first, err := l.Acquire(ctx, name, key, 5*time.Second, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				time.Sleep(hold)
				_ = first.Release(ctx)
			}()
			called := time.Now()
			h, err := l.Acquire(ctx, name, key, 5*time.Second, 2*time.Second)
			returned := time.Now()
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release(ctx)
			if h.Tried.Before(called) || h.Tried.After(returned) {
				t.Errorf("Tried %v is not within the call (%v to %v)", h.Tried, called, returned)
			}
			if waited := h.Tried.Sub(called); waited < hold*3/4 {
				t.Errorf("Tried %v after the call, want about %v or more: the attempt that got the lock came after the release", waited, hold)
			}
		})
	}
}
