package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// LabLocker takes the oversell lab's locks (docs/lab.md): teaching code, which internal/app
// wires in from internal/lab. The service needs no more of it than this.
type LabLocker interface {
	// Acquire takes lab lock name (a product's LabLock) on key with a lease of lease,
	// waiting up to wait. A lock not had in time is an error that matches ErrBusy (or
	// dlock.ErrNotObtained); one whose store cannot serve, ErrUnavailable (or one
	// IsUnavailable recognises).
	Acquire(ctx context.Context, name, key string, lease, wait time.Duration) (LabLock, error)
}

// LabLock is a lab lock while its holder has it.
type LabLock struct {
	// Ctx is the context the holder works on: cancelled when the lock is lost (for the
	// locks that know it), with a cause that matches ErrLockLost or dlock.ErrLost.
	Ctx context.Context
	// Fence is the lock's fencing token, which the holder's read and write check; 0: none.
	Fence int64
	// Token is the lock's value where it is unique to the grant (lock histories name the
	// grant by it); empty: none.
	Token string
	// Tried is when the attempt that got the lock began (the grant's invoke in a lock
	// history); zero: unknown.
	Tried time.Time
	// Release gives the lock back the way this lock does it (which, for some, is the flaw).
	Release func(ctx context.Context) error
}

// labBuyer is the oversell lab's purchase path (docs/lab.md), teaching code: take the
// product's lab lock, read the stock, if none answer sold out, think, then write stock =
// read - 1 and insert the order, and release. No row lock, no conditional update, no group
// commit, no sold-out mark: the lock alone guards the stock, and the unique (product, user)
// key is the only guard left in the database. What each lock gets wrong shows as an oversell
// or a stall.
type labBuyer struct {
	*core
	locks LabLocker // nil: lab products are unavailable
}

func (b labBuyer) buy(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	if b.locks == nil {
		return Order{}, fmt.Errorf("%w: the lab is not set up in this process", ErrUnavailable)
	}
	lease := p.Lease()
	if lease == 0 {
		lease = b.cfg.LockTTL
	}
	key, asked := b.keys.Lock(p.ID), time.Now()
	h, err := b.locks.Acquire(ctx, p.LabLock, key, lease, b.cfg.LockWait)
	if err != nil {
		return Order{}, err
	}
	if h.Ctx == nil {
		h.Ctx = ctx
	}
	g := b.history.granted(key, h.Token, h.Fence, later(asked, h.Tried)) // nil unless the lock history is on
	stopWatch := g.watchLoss(h.Ctx)
	defer func() {
		stopWatch()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		asked := time.Now()
		err := h.Release(rctx)
		g.released(asked, err)
		if err != nil {
			b.log.WarnContext(ctx, "lab lock release failed", "product_id", p.ID, "lock", p.LabLock, "err", err)
		}
	}()
	o, err := b.readThinkWrite(h.Ctx, p, userID, h.Fence, g)
	if err != nil && ctx.Err() == nil && h.Ctx.Err() != nil {
		// The lock was lost (dlock, etcd) and its loss cancelled the work: the database
		// calls say only "context canceled"; the cause (a lock lost) makes the answer busy.
		err = errors.Join(err, context.Cause(h.Ctx))
	}
	return o, err
}
