package labapi

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// naive is the teaching control: read the stock without a lock, check it, think, then
// insert the order and write back stock = read - 1, with no conditional update. Buyers who
// read the same stock all pass the check and all write the same value: lost updates, so it
// oversells. It never marks the product sold out: its own lost updates can bring the stock
// back above zero after someone read zero.
type naive struct{}

func (naive) Buy(ctx context.Context, c order.Checkout, p inventory.Product, userID int64) (order.Order, error) {
	return readThinkWrite(ctx, c, p, userID, 0, nil)
}

// readThinkWrite (the naive strategy, and the lab's purchase once its lock is held) reads the
// stock (claiming the row for fence, if not 0: see claimStock), answers sold out if none is
// left, thinks, then inserts the order and writes back stock = read - 1 (with a fence, only if
// no newer one has touched the row). Nothing in it stops two buyers who read the same stock
// from both writing. The read and the write are recorded under g, the lab lock's grant in the
// lock history (nil: none).
func readThinkWrite(ctx context.Context, c order.Checkout, p inventory.Product, userID int64, fence int64, g *grant) (order.Order, error) {
	readAt := time.Now()
	stock, err := claimStock(c.DB(ctx), p.ID, fence)
	g.read(ctx, readAt, stock, err)
	if err != nil {
		return order.Order{}, err
	}
	if stock <= 0 {
		return order.Order{}, c.SoldOut(ctx, p, userID)
	}
	if err := c.Think(ctx, p); err != nil {
		// The write is never sent: recorded as failed, with why (the lock's loss, for one).
		g.writingStock(ctx, stock-1)(nil, err)
		return order.Order{}, err
	}
	written := g.writingStock(ctx, stock-1)
	var before *int // the stock the write overwrote, once applied
	o, err := c.Write(ctx, p, userID, func(tx *gorm.DB) error {
		before = nil // a retried transaction starts again
		b, err := swapStock(tx, p.ID, stock-1, fence)
		if err == nil {
			before = &b
		}
		return err
	})
	if err != nil {
		before = nil // not committed: nothing was overwritten
	}
	written(before, err)
	return o, err
}
