package labapi

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// labBuyer is the oversell lab's purchase path (docs/lab.md), teaching code: take the
// product's lab lock, read the stock, if none answer sold out, think, then write stock =
// read - 1 and insert the order, and release. No row lock, no conditional update, no group
// commit, no sold-out mark: the lock alone guards the stock, and the unique (product, user)
// key is the only guard left in the database. What each lock gets wrong shows as an oversell
// or a stall.
type labBuyer struct {
	locks   *labLocks
	keys    inventory.Keys
	history *lockHistory // nil: no lock history
	log     *slog.Logger
}

// Buy takes the product's lab lock, buys under it (readThinkWrite) and releases it.
func (b *labBuyer) Buy(ctx context.Context, c order.Checkout, p inventory.Product, userID int64) (order.Order, error) {
	cfg := c.Config()
	lease := p.Lease()
	if lease == 0 {
		lease = cfg.LockTTL
	}
	key, asked := b.keys.Lock(p.ID), time.Now()
	h, err := b.locks.Acquire(ctx, p.LabLock, key, lease, cfg.LockWait)
	if err != nil {
		return order.Order{}, err
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
		if err != nil && b.log != nil {
			b.log.WarnContext(ctx, "lab lock release failed", "product_id", p.ID, "lock", p.LabLock, "err", err)
		}
	}()
	o, err := readThinkWrite(h.Ctx, c, p, userID, h.Fence, g)
	if err != nil && ctx.Err() == nil && h.Ctx.Err() != nil {
		// The lock was lost (dlock, etcd) and its loss cancelled the work: the database
		// calls say only "context canceled"; the cause (a lock lost) makes the answer busy.
		err = errors.Join(err, context.Cause(h.Ctx))
	}
	return o, err
}
