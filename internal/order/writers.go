package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seckill/seckill/internal/keyed"
)

// writers is the Locker of the redis strategy's batches: one writer slot per product in this
// process, held while a batch is written. The gate has admitted every buyer already, so no
// lock is needed across processes (PostgreSQL's row lock orders the writes and its guards
// keep them true); the slot makes the admitted buyers who arrive while a batch is written
// join the next one, which its leader writes in one statement once the slot is free: group
// commit, as under the dlock strategy's lock. It is safe for concurrent use.
type writers struct{ slots keyed.Mutexes }

// errNoWriterSlot is a batch that waited its whole wait for the product's writer slot.
var errNoWriterSlot = fmt.Errorf("%w: the product's writer slot in this process stayed taken", ErrBusy)

// Do waits up to wait for key's writer slot, runs fn with it (fence 0: the redis strategy
// writes no fence), and frees it. ttl and fair do not apply.
func (w *writers) Do(ctx context.Context, key string, _, wait time.Duration, _ bool,
	fn func(ctx context.Context, l HeldLock) error,
) error {
	wctx, cancel := context.WithTimeout(ctx, wait)
	err := w.slots.Lock(wctx, key)
	cancel()
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return context.Cause(ctx)
	default:
		return errNoWriterSlot
	}
	defer w.slots.Unlock(key)
	return fn(ctx, unfenced{})
}

// DoMulti is not used: bundles are for dlock products.
func (w *writers) DoMulti(context.Context, []string, time.Duration, time.Duration,
	func(context.Context, map[string]HeldLock) error,
) error {
	return fmt.Errorf("order: no bundles of redis products")
}

// unfenced is a writer slot's HeldLock: fence 0, which passes sell.sql's fence check on a
// product no lock has fenced (redis products never are).
type unfenced struct{}

func (unfenced) Fence() int64                       { return 0 }
func (unfenced) NextWaiterSince() (time.Time, bool) { return time.Time{}, false }

func (unfenced) RaiseFence(context.Context, int64) (int64, error) {
	return 0, errors.New("order: a writer slot has no fence")
}
