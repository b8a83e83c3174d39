package lab_test

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/lab"
	"github.com/seckill/seckill/internal/testenv"
)

// TestWatchdogFenceDlock: the three locks on internal/dlock differ in exactly what the lab
// shows with them. Each holds a lock whose key is then taken from it (deleted and set by
// another, as a lease that ran out and a new holder would): watchdog's holder gets no fence
// and is never told; fence's holder gets a fence (PostgreSQL is its only guard) and is never
// told either; dlock's holder gets a fence and its work is cancelled with dlock.ErrLost.
func TestWatchdogFenceDlock(t *testing.T) {
	rdb, prefix := testenv.Redis(t)
	dl := dlock.New(rdb, nil)
	t.Cleanup(func() { dl.Close() })
	l := lab.New(rdb, lab.Clients{Dlocks: dl})
	ctx := context.Background()
	for i, tc := range []struct {
		lock            string
		fenced, cancels bool
	}{{"watchdog", false, false}, {"fence", true, false}, {"dlock", true, true}} {
		t.Run(tc.lock, func(t *testing.T) {
			key := prefix + ":{f:" + strconv.Itoa(i) + "}:lock"
			const lease = 300 * time.Millisecond
			h, err := l.Acquire(ctx, tc.lock, key, lease, time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Release(ctx)
			if got := h.Fence > 0; got != tc.fenced {
				t.Errorf("fence %d: fenced %v, want %v", h.Fence, got, tc.fenced)
			}
			if err := rdb.Set(ctx, key, "another holder", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			// The watchdog renews every lease/3: its next renewal finds the token gone.
			select {
			case <-h.Ctx.Done():
				if !tc.cancels {
					t.Errorf("the holder's work was cancelled (%v): want it told nothing", context.Cause(h.Ctx))
				}
			case <-time.After(3 * lease):
				if tc.cancels {
					t.Error("the holder's work goes on after the loss: want it cancelled")
				}
			}
			if tc.cancels && !errors.Is(context.Cause(h.Ctx), dlock.ErrLost) {
				t.Errorf("cause %v, want dlock.ErrLost", context.Cause(h.Ctx))
			}
		})
	}
}
