package order

import (
	"context"

	"github.com/seckill/seckill/internal/inventory"
)

// writeHeld writes a batch (writeBatch) under held's fence. When the product refuses that
// fence for one it holds and the lock is still held, it raises the lock's fence above it and
// writes once more: the lock's store had lost fences it gave out (docs/dlock.md, "If Redis
// loses its data"). Its errors are writeBatch's.
func (l *lockedBuyer) writeHeld(ctx context.Context, p inventory.Product, users []int64, held HeldLock) ([]result, int, error) {
	results, left, err := l.writeBatch(ctx, p, users, nil, held.Fence())
	if l.raised(ctx, p.ID, held, err) {
		results, left, err = l.writeBatch(ctx, p, users, nil, held.Fence())
	}
	return results, left, err
}

// raised raises held's fence above the one product id holds when err is that product's
// refusal of the fence (inventory.StaleFenceError), and reports whether it did. A lock lost
// meanwhile, a stale holder's, is not raised: its refusal stands.
func (c *core) raised(ctx context.Context, id int64, held HeldLock, err error) bool {
	stored, ok := inventory.StoredFence(err)
	if !ok || ctx.Err() != nil {
		return false
	}
	was := held.Fence()
	fence, err := held.RaiseFence(ctx, stored)
	if err != nil {
		c.log.WarnContext(ctx, "lock fence not raised: the refused write stands",
			"product_id", id, "fence", was, "product_fence", stored, "err", err)
		return false
	}
	c.observer.FenceRaised()
	c.log.WarnContext(ctx, "lock fence raised above the product's: the lock's Redis had lost fences it gave out (a restart from older data, a failover, a clock set right)",
		"product_id", id, "fence", was, "product_fence", stored, "raised", fence)
	return true
}
