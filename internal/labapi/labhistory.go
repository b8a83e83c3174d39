package labapi

import (
	"context"
	"errors"
	"time"

	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/inventory"
)

// The lab's stock reads and writes in the lock history, for the lock timeline
// (internal/timeline): what PostgreSQL answered, as it answered it. A nil *grant records
// nothing.

// read records a read of the stock under the grant, begun at invoke: the value PostgreSQL
// returned, or why it refused (err; ctx is the holder's watched context, whose cause says
// whether the lock's loss cancelled it).
func (g *grant) read(ctx context.Context, invoke time.Time, stock int, err error) {
	if g == nil {
		return
	}
	op := history.LockOp{Kind: history.Read, Invoke: invoke, Outcome: history.OK}
	if err != nil {
		op.Outcome, op.Reason = history.Fail, reasonOf(ctx, err)
	} else {
		op.Value = &stock
	}
	g.recordOp(op)
}

// writingStock is writing for the lab's write of stock = value: the func it returns is called
// once the write is over, with the stock PostgreSQL held just before it (swapStock; nil
// if it was not applied) and its error. A write the holder never sent, its work stopped
// before it (the think cancelled by the lock's loss), is recorded as one that failed at once,
// with the reason (history.ReasonLost), which the timeline draws apart from a write PostgreSQL
// refused for its fence (history.ReasonFence).
func (g *grant) writingStock(ctx context.Context, value int) (written func(before *int, err error)) {
	if g == nil {
		return func(*int, error) {}
	}
	invoke := time.Now()
	return func(before *int, err error) {
		op := history.LockOp{Kind: history.Write, Invoke: invoke, Outcome: writeOutcome(err), Value: &value, Before: before}
		if err != nil {
			op.Reason = reasonOf(ctx, err)
		}
		g.recordOp(op)
	}
}

// reasonOf says why an operation under a lock failed with err: refused for a stale fence, or
// cancelled by the loss of the lock (the cause of ctx, the holder's watched context, when
// not nil), else err itself.
func reasonOf(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, inventory.ErrFenced):
		return history.ReasonFence
	case lost(err), ctx != nil && ctx.Err() != nil && lost(context.Cause(ctx)):
		return history.ReasonLost
	}
	return err.Error()
}
