package order

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// rowLockBuyer is the purchase path of the strategies that PostgreSQL alone serialises:
// pessimistic (the row lock) and optimistic (the conditional update). It holds no state of
// its own.
type rowLockBuyer struct{ *core }

// buyPessimistic locks the product row with SELECT ... FOR UPDATE for the whole transaction,
// think_ms included (that is the strategy): buyers of one product queue in PostgreSQL, each
// holding a connection, at most Config.ProductConns of them per process.
func (r rowLockBuyer) pessimistic(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	return r.buyInTx(ctx, p, userID, func(tx *gorm.DB) (Order, int, error) {
		if err := r.soldOutCheck(ctx, tx, p, userID, true); err != nil {
			return Order{}, 0, err
		}
		if err := r.think(ctx, p); err != nil {
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
	if err := r.think(ctx, p); err != nil {
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
