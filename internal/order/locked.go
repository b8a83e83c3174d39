package order

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
)

// buyLocked is the dlock strategy, the design this project teaches: lock the product in
// Redis with a watchdog, then in one transaction re-check the stock, insert the order and
// decrement under the lock's fence, commit, and only then release.
//
// If the lock is lost while the transaction runs, the watched context is cancelled and the
// transaction rolls back. If the holder is paused so long that another process takes the
// lock and writes, the fence makes the late write fail. Either way the buyer gets ErrBusy.
func (s *Service) buyLocked(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	var (
		o         Order
		committed bool
	)
	opt := &dlock.Options{Wait: s.cfg.LockWait}
	err := s.Locks.Do(ctx, s.Keys.Lock(p.ID), s.cfg.LockTTL, opt, func(ctx context.Context, l *dlock.Lock) error {
		var err error
		o, err = s.inTx(ctx, p, func(tx *gorm.DB) (Order, int, error) {
			return s.lockedWrite(ctx, tx, p, userID, l.Fence())
		})
		committed = err == nil
		return err
	})
	if committed {
		// The order is in PostgreSQL: it was written under a fence no newer holder had
		// overtaken, so it stands even if the lock was lost between COMMIT and release.
		if !errors.Is(err, dlock.ErrLost) && err != nil {
			s.Logger.Warn("after a committed purchase", "product_id", p.ID, "err", err)
		}
		return o, nil
	}
	return Order{}, err
}

// lockedWrite is the transaction of buyLocked. It returns the order and the stock left.
func (s *Service) lockedWrite(ctx context.Context, tx *gorm.DB, p inventory.Product, userID, fence int64) (Order, int, error) {
	if err := s.recheck(ctx, tx, p, false); err != nil {
		return Order{}, 0, err
	}
	o, err := insertOrder(tx, p.ID, userID)
	if err != nil {
		return Order{}, 0, err
	}
	left, err := inventory.DecrementFenced(tx, p.ID, 1, fence)
	return o, left, err
}
