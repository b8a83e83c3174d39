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

// Bound returns the context of one round of what: cancelled, with a cause wrapping errBound,
// after RoundLimit; stop ends it. A lock that ignores its context and is still busy a minute
// after that crashes the run (a panic names what hung), so that a hung lock fails the run
// instead of stalling it. The bound is a cancellation and not a context deadline: a lock
// that sees a deadline on its context may skip work of its own (redislock bounds its retries
// with a deadline only when its context has none), which would change what is measured.
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
