package order

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// Strategy sells one unit of p to userID by a purchase path plugged into the Service from
// outside (Deps.Strategies), such as the lab build's teaching strategies (internal/labapi).
// c is what it may do with the service's orders. Its errors are Purchase's.
type Strategy interface {
	Buy(ctx context.Context, c Checkout, p inventory.Product, userID int64) (Order, error)
}

// Thinker takes product p's think_ms pause inside a purchase's critical section: a teaching
// knob plugged in from outside (Deps.Think). Its error, ctx's end, ends the purchase.
type Thinker interface {
	Think(ctx context.Context, p inventory.Product) error
}

// Checkout is what a plugged Strategy may do with the service's orders.
type Checkout struct{ c *core }

// DB is the service's database on ctx, for a strategy's reads outside a transaction.
func (k Checkout) DB(ctx context.Context) *gorm.DB { return k.c.db.WithContext(ctx) }

// Config is the service's configuration, its defaults in place.
func (k Checkout) Config() Config { return k.c.cfg }

// Think takes p's think_ms pause, if the service has a Thinker.
func (k Checkout) Think(ctx context.Context, p inventory.Product) error { return k.c.think(ctx, p) }

// Write inserts userID's order of p and runs write, the stock change, in one transaction,
// and returns the order committed; it never marks p sold out. Its errors: ErrAlreadyPurchased,
// write's, ErrOutcomeUnknown, or one meaning nothing was written.
func (k Checkout) Write(ctx context.Context, p inventory.Product, userID int64, write func(tx *gorm.DB) error) (Order, error) {
	return k.c.buyInTx(ctx, p, userID, func(tx *gorm.DB) (Order, int, error) {
		o, err := insertOrder(tx, p.ID, userID)
		if err != nil {
			return Order{}, 0, err
		}
		return o, -1, write(tx) // -1: never a sold-out mark
	})
}

// SoldOut is the answer to userID who found no stock of p: the order they hold (a
// *PurchasedError), else inventory.ErrSoldOut.
func (k Checkout) SoldOut(ctx context.Context, p inventory.Product, userID int64) error {
	err := orderOrSoldOut(k.c.db.WithContext(ctx), p.ID, userID)
	if errors.Is(err, errUnitBack) { // no payment window: never, but for a restock
		err = fmt.Errorf("product %d: %w", p.ID, inventory.ErrSoldOut)
	}
	return err
}
