package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// rowLockBuyer is the purchase path of the strategies that PostgreSQL alone serialises:
// naive (nothing does: it oversells, for teaching), pessimistic (the row lock) and
// optimistic (the conditional update). It holds no state of its own.
type rowLockBuyer struct{ *core }

// naive is the teaching control: read the stock without a lock, check it, think, then
// insert the order and write back stock = read - 1, with no conditional update. Buyers who
// read the same stock all pass the check and all write the same value: lost updates, so it
// oversells. The two writes share one transaction only so that the buyer's answer is exact;
// that does not close the race. It never marks the product sold out: its own lost updates
// can bring the stock back above zero after someone read zero.
func (r rowLockBuyer) naive(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	return r.readThinkWrite(ctx, p, userID, 0, nil)
}

// readThinkWrite reads the stock, answers sold out if none is left, thinks, then inserts the order
// and writes back stock = read - 1 (with a fence, only if no newer one touched the row): the naive
// strategy, and the lab's purchase once its lock is held. Nothing in it stops two buyers who read
// the same stock from both writing; the write is recorded under g, the lab lock's grant (nil:
// none).
func (c *core) readThinkWrite(ctx context.Context, p inventory.Product, userID int64, fence int64, g *grant) (Order, error) {
	readAt := time.Now()
	stock, err := inventory.ClaimStock(c.db.WithContext(ctx), p.ID, fence)
	g.read(ctx, readAt, stock, err)
	if err != nil {
		return Order{}, err
	}
	if stock <= 0 {
		err := orderOrSoldOut(c.db.WithContext(ctx), p.ID, userID)
		if errors.Is(err, errUnitBack) { // naive takes no payment window: never, but for a restock
			err = fmt.Errorf("product %d: %w", p.ID, inventory.ErrSoldOut)
		}
		return Order{}, err
	}
	if err := think(ctx, p); err != nil {
		// The write is never sent: recorded as failed, with why (the lock's loss, for one).
		g.writingStock(ctx, stock-1)(nil, err)
		return Order{}, err
	}
	written := g.writingStock(ctx, stock-1)
	var before *int // the stock the write overwrote, once applied
	o, err := c.buyInTx(ctx, p, userID, func(tx *gorm.DB) (Order, int, error) {
		before = nil // a retried transaction starts again
		o, err := insertOrder(tx, p.ID, userID)
		if err != nil {
			return Order{}, 0, err
		}
		b, err := inventory.SwapStockFenced(tx, p.ID, stock-1, fence)
		if err == nil {
			before = &b
		}
		return o, -1, err // -1: never a sold-out mark
	})
	if err != nil {
		before = nil // not committed: nothing was overwritten
	}
	written(before, err)
	return o, err
}

// buyPessimistic locks the product row with SELECT ... FOR UPDATE for the whole transaction,
// think_ms included (that is the strategy): buyers of one product queue in PostgreSQL, each
// holding a connection, at most Config.ProductConns of them per process.
func (r rowLockBuyer) pessimistic(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	return r.buyInTx(ctx, p, userID, func(tx *gorm.DB) (Order, int, error) {
		if err := r.soldOutCheck(ctx, tx, p, userID, true); err != nil {
			return Order{}, 0, err
		}
		if err := think(ctx, p); err != nil {
			return Order{}, 0, err
		}
		return r.insertAndDecrement(tx, p, userID)
	})
}

// buyOptimistic takes no lock: it reads the stock, thinks (no transaction open), then
// inserts the order and takes the unit with UPDATE ... WHERE stock >= 1, the only
// serialisation; a buyer who loses the race gets sold_out.
func (r rowLockBuyer) optimistic(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	if err := r.soldOutCheck(ctx, r.db.WithContext(ctx), p, userID, false); err != nil {
		return Order{}, err
	}
	if err := think(ctx, p); err != nil {
		return Order{}, err
	}
	return r.buyInTx(ctx, p, userID, func(tx *gorm.DB) (Order, int, error) {
		return r.insertAndDecrement(tx, p, userID)
	})
}

// soldOutCheck reads the product's stock in tx (locking the row with forUpdate), and marks
// it sold out when none is left: a committed zero, safe to share. The buyer is then answered
// with the order it holds, if it has one (a retry), else sold out; unless a unit came back
// meanwhile (only without the row lock): then the buyer goes on to buy it.
func (r rowLockBuyer) soldOutCheck(ctx context.Context, tx *gorm.DB, p inventory.Product, userID int64, forUpdate bool) error {
	stock, err := inventory.Stock(tx, p.ID, forUpdate)
	if err != nil {
		return err
	}
	if stock == 0 {
		r.soldOut.Mark(ctx, p.ID)
		if err := orderOrSoldOut(tx, p.ID, userID); !errors.Is(err, errUnitBack) {
			return err
		}
	}
	return nil
}

// insertAndDecrement inserts the order, then takes one unit conditionally.
func (r rowLockBuyer) insertAndDecrement(tx *gorm.DB, p inventory.Product, userID int64) (Order, int, error) {
	o, err := insertOrder(tx, p.ID, userID)
	if err != nil {
		return Order{}, 0, err
	}
	left, err := inventory.Decrement(tx, p.ID, 1)
	return o, left, err
}
