package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// buyLab is the oversell lab's purchase path (docs/lab.md), teaching code: take the product's
// lab lock, read the stock, if none answer sold out, think, then write stock = read - 1 and
// insert the order, and release. No row lock, no conditional update, no group commit, no
// sold-out mark: the lock alone guards the stock, and the unique (product, user) key is the
// only guard left in the database. What each lock gets wrong shows as an oversell or a stall.
func (s *Service) buyLab(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	if s.Lab == nil {
		return Order{}, fmt.Errorf("%w: the lab is not set up in this process", ErrUnavailable)
	}
	lease := p.Lease()
	if lease == 0 {
		lease = s.cfg.LockTTL
	}
	h, err := s.Lab.Acquire(ctx, p.LabLock, s.Keys.Lock(p.ID), lease, s.cfg.LockWait)
	if err != nil {
		return Order{}, err
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		if err := h.Release(rctx); err != nil {
			s.Logger.Warn("lab lock release failed", "product_id", p.ID, "lock", p.LabLock, "err", err)
		}
	}()
	o, err := s.readThinkWrite(h.Ctx, p, userID, h.Fence)
	if err != nil && ctx.Err() == nil && h.Ctx.Err() != nil {
		// The lock was lost (dlock, etcd) and its loss cancelled the work: the database
		// calls say only "context canceled"; the cause (ErrLost) makes the answer busy.
		err = errors.Join(err, context.Cause(h.Ctx))
	}
	return o, err
}
