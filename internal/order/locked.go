package order

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/inventory"
)

// lockedBuyer is the dlock strategy: the buyers of a product who arrive while its lock is waited
// for or held join one batch, whose leader takes the product's lock with a watchdog and sells the
// batch in one transaction under the lock's fence, then commits and only then releases
// (docs/group-commit.md). A lock lost before COMMIT abandons the transaction (ErrBusy, nothing
// written); a COMMIT sent stands. Its state is the open batches of its products; it also sells
// bundles.
type lockedBuyer struct {
	*core
	locks   Locker
	gate    gateConfirmer // nil: no gate to confirm in (the dlock strategy)
	batches *batcher
}

func newLockedBuyer(c *core, locks Locker, gate gateConfirmer) *lockedBuyer {
	return &lockedBuyer{core: c, locks: locks, gate: gate, batches: newBatcher(c.cfg.BatchMax)}
}

func (l *lockedBuyer) buy(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	res := l.buyBatched(ctx, p, userID)
	return res.o, res.err
}

// gateConfirmer is what a batch's leader tells the gate in front of its product (the redis
// strategy's, see gatedBuyer) once its batch committed, before it answers.
type gateConfirmer interface {
	// confirm records the admissions of the buyers who hold an order as done, all in one
	// round trip, and reports whether that was done for all of them.
	confirm(ctx context.Context, id int64, buyers ...int64) bool
	// gateSoldOut checks the gate of a product PostgreSQL has just sold the last unit of.
	gateSoldOut(ctx context.Context, id int64)
}

// buyBatched joins the buyer to the product's open batch, whose leader writes it under
// the product's lock and then, if confirm is not nil, confirms its buyers (see lead), and
// returns the buyer's answer.
func (l *lockedBuyer) buyBatched(ctx context.Context, p inventory.Product, userID int64) result {
	r := &request{user: userID, at: time.Now(), res: make(chan result, 1)}
	r.deadline, _ = ctx.Value(deadlineKey{}).(time.Time)
	if l.tracer != nil {
		r.span = trace.SpanContextFromContext(ctx) // the batch's span links to it
	}
	bt, lead := l.batches.join(p.ID, r)
	if lead {
		l.lead(ctx, p, bt)
	}
	select {
	case res := <-r.res:
		return res
	case <-ctx.Done():
		// Leave the batch the buyer is in now: the one it joined, or one a fair product's
		// leader put it back into.
		if l.batches.leave(r) {
			return result{err: context.Cause(ctx)}
		}
		return <-r.res // a leader has taken this buyer: the answer is on its way
	}
}

// batchRun is what a leader knows of its batch, so that every way out of lead, a panic
// included, answers each buyer exactly once, and truly.
type batchRun struct {
	reqs     []*request
	taken    bool     // the lock was had and reqs taken from the batch
	results  []result // the batch's outcome, once known
	answered bool
	err      error // what ended the batch, if it has no results
}

// lead obtains the product's lock, takes the batch, writes it in one transaction and answers
// every buyer in it as soon as it committed (and confirm, if any, is done), before the lock is
// released. It works on a context detached from its own buyer's (the other buyers depend on
// it), with the same deadline; the write is bounded by the earliest deadline of the buyers it
// took, so that each is answered within its own.
func (l *lockedBuyer) lead(ctx context.Context, p inventory.Product, bt *batch) {
	ctx, cancel := detach(ctx)
	defer cancel()
	run := &batchRun{}
	ctx, waitCtx, spans := l.startBatchSpans(ctx, p)
	defer func() { spans.end(run.reqs, run.err) }() // after endBatch: with the batch's buyers and outcome
	defer l.endBatch(ctx, p, bt, run)
	run.err = l.locks.Do(waitCtx, l.keys.Lock(p.ID), l.cfg.LockTTL, l.cfg.LockWait, p.Fair, func(lctx context.Context, held HeldLock) error {
		lctx = spans.held(lctx, held.Fence())
		l.linger(lctx, bt)
		if since, ok := held.NextWaiterSince(); ok { // known for fair Redis locks only
			// Serve only the buyers who came before the lock's next waiter (another
			// process's, or this one's next leader): the others go after it, as the fair
			// lock's queue says, in a batch led for them (see goLead).
			var next *batch
			var until time.Time
			run.reqs, next, until = l.batches.takeBefore(p.ID, bt, since)
			if next != nil {
				l.goLead(ctx, until, p, next)
			}
		} else {
			run.reqs = l.batches.take(p.ID, bt)
		}
		run.taken = true
		spans.link(run.reqs)
		wctx, cancel := l.dropExpired(lctx, run)
		defer cancel()
		if len(run.reqs) == 0 {
			run.answered = true
			return nil
		}
		err := l.think(wctx, p) // the teaching pause: lock held, no transaction open
		var results []result
		var left int
		if err == nil {
			written := writing(held) // in the lock history, if it is recorded
			results, left, err = l.writeHeld(wctx, p, users(run.reqs), held)
			written(err)
		}
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrOutcomeUnknown) &&
				context.Cause(wctx) == errDeadline && lctx.Err() == nil {
				err = fmt.Errorf("%w: %w", errDeadline, err) // its buyers' deadline: busy
			}
			return err
		}
		run.results = results
		if l.gate != nil {
			confirmed(lctx, p.ID, results, users(run.reqs), l.gate.confirm)
			if left == 0 {
				l.gate.gateSoldOut(lctx, p.ID)
			}
		}
		l.soldOutIfZero(lctx, p.ID, left)
		l.observer.Batch(len(run.reqs))
		l.answer(run)
		return nil
	})
}

// goLead leads next, a batch of buyers a fair product's leader put back, in a goroutine of
// its own until their latest deadline (until): none of them leads it, so that each can still
// leave (its client gone, its own deadline passed) and be answered at once.
func (l *lockedBuyer) goLead(ctx context.Context, until time.Time, p inventory.Product, next *batch) {
	if until.IsZero() {
		until = time.Now().Add(l.cfg.PurchaseTimeout)
	}
	ctx = context.WithValue(context.WithoutCancel(ctx), deadlineKey{}, until)
	go l.lead(ctx, p, next)
}

// dropExpired answers busy the buyers of run whose own deadline has passed (taken as they
// were leaving) and returns ctx bounded by the earliest deadline of the others.
func (l *lockedBuyer) dropExpired(ctx context.Context, run *batchRun) (context.Context, context.CancelFunc) {
	now := time.Now()
	live := run.reqs[:0:0]
	for _, r := range run.reqs {
		if !r.deadline.IsZero() && !now.Before(r.deadline) {
			r.res <- result{err: errDeadline}
			continue
		}
		live = append(live, r)
	}
	run.reqs = live
	if first, _ := span(live); !first.IsZero() {
		return context.WithDeadlineCause(ctx, first, errDeadline)
	}
	return ctx, func() {}
}

// endBatch answers every buyer of the batch who has no answer yet: with the batch's results
// when they are known, else with what ended the batch. It recovers a panic of the leader, so
// that a bug neither leaves the batch's buyers waiting for ever nor turns a committed
// purchase into an error.
func (l *lockedBuyer) endBatch(ctx context.Context, p inventory.Product, bt *batch, run *batchRun) {
	if r := recover(); r != nil {
		l.log.ErrorContext(ctx, "panic in a batch leader", "product_id", p.ID, "panic", fmt.Sprint(r),
			"stack", string(debug.Stack()))
		run.err = fmt.Errorf("%w: %v", errPanic, r)
	}
	if !run.taken { // the lock was never had: the batch is still open
		run.reqs = l.batches.take(p.ID, bt)
	}
	if run.answered {
		// The orders stand even if the lock was lost between COMMIT and release: they were
		// written under a fence no newer holder had overtaken.
		if run.err != nil && !lost(run.err) {
			l.log.WarnContext(ctx, "after a committed batch", "product_id", p.ID, "err", run.err)
		}
		return
	}
	if run.results == nil {
		if errors.Is(run.err, context.DeadlineExceeded) && context.Cause(ctx) == errDeadline {
			run.err = fmt.Errorf("%w: %w", errDeadline, run.err) // busy, whoever asks
		}
		run.results = make([]result, len(run.reqs))
		for i := range run.results {
			run.results[i].err = run.err
		}
		l.observer.Batch(len(run.reqs))
	}
	l.answer(run)
}

// answer sends each buyer of the batch its result.
func (l *lockedBuyer) answer(run *batchRun) {
	for i, r := range run.reqs {
		r.res <- run.results[i]
	}
	run.answered = true
}

// detach returns a context with ctx's values that neither ctx's cancellation nor a shorter
// deadline of its caller's reaches, bounded by the purchase's own deadline (see Purchase).
func detach(ctx context.Context) (context.Context, context.CancelFunc) {
	d := context.WithoutCancel(ctx)
	if deadline, ok := ctx.Value(deadlineKey{}).(time.Time); ok {
		return context.WithDeadlineCause(d, deadline, errDeadline)
	}
	return context.WithTimeoutCause(d, 10*time.Second, errDeadline) // not called through Purchase
}

// linger holds the lock for up to BatchLinger for more buyers to join, unless the batch is
// full first. With the default linger of zero, batches form only from buyers who arrive
// while the lock is being waited for.
func (l *lockedBuyer) linger(ctx context.Context, bt *batch) {
	if l.cfg.BatchLinger <= 0 {
		return
	}
	t := time.NewTimer(l.cfg.BatchLinger)
	defer t.Stop()
	select {
	case <-t.C:
	case <-bt.full:
	case <-ctx.Done():
	}
}

// confirmed runs confirm for the batch's buyers who hold an order, and marks their results
// confirmed if it succeeded.
func confirmed(ctx context.Context, id int64, results []result, users []int64,
	confirm func(ctx context.Context, id int64, buyers ...int64) bool,
) {
	var buyers []int64
	for i, r := range results {
		if r.err == nil || errors.Is(r.err, ErrAlreadyPurchased) {
			buyers = append(buyers, users[i])
		}
	}
	if len(buyers) == 0 || !confirm(ctx, id, buyers...) {
		return
	}
	for i, r := range results {
		if r.err == nil || errors.Is(r.err, ErrAlreadyPurchased) {
			results[i].confirmed = true
		}
	}
}

func users(reqs []*request) []int64 {
	u := make([]int64, len(reqs))
	for i, r := range reqs {
		u[i] = r.user
	}
	return u
}
