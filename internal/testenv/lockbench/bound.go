package lockbench

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// RoundLimit bounds one round of a benchmark (see Bound): no round of 2,000 operations comes
// near it here (the slowest, redsync's handoffs, take about 2 s), so a round that reaches it
// has a lock that hangs.
var RoundLimit = time.Minute

// errBound is the cause of a round's context that ran out.
var errBound = errors.New("lockbench: round ran out of time")

// Bound returns the context of one round of what, cancelled (a cause wrapping errBound, not a
// deadline) after RoundLimit; stop ends it. A lock still busy a minute after that crashes the run
// with a panic naming what hung. See docs/dlock.md#benchmarks (bounded rounds).
func Bound(b *testing.B, what string) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	over := time.AfterFunc(RoundLimit, func() {
		cancel(fmt.Errorf("%w: %s took over %v", errBound, what, RoundLimit))
	})
	hung := time.AfterFunc(RoundLimit+time.Minute, func() {
		panic(fmt.Sprintf("lockbench: %s still running %v after its bound: a lock ignores its context and hangs", what, time.Minute))
	})
	return ctx, func() {
		over.Stop()
		hung.Stop()
		cancel(nil)
	}
}
