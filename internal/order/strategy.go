package order

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// Strategy is a purchase path plugged in through Deps.Strategies. Its errors are Purchase's.
type Strategy interface {
	Buy(ctx context.Context, c Checkout, p inventory.Product, userID int64) (Order, error)
}

// Thinker pauses p's think_ms inside the critical section; its error ends the purchase.
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

// Write inserts the order and runs write in one transaction. Errors: ErrAlreadyPurchased,
// write's, ErrOutcomeUnknown.
func (k Checkout) Write(ctx context.Context, p inventory.Product, userID int64, write func(tx *gorm.DB) error) (Order, error) {
	return k.c.buyInTx(ctx, p, userID, func(tx *gorm.DB) (Order, int, error) {
		o, err := insertOrder(tx, p.ID, userID)
		if err != nil {
			return Order{}, 0, err
		}
		return o, -1, write(tx) // -1: never a sold-out mark
	})
}

// SoldOut returns the user's *PurchasedError if any, else inventory.ErrSoldOut.
func (k Checkout) SoldOut(ctx context.Context, p inventory.Product, userID int64) error {
	err := orderOrSoldOut(k.c.db.WithContext(ctx), p.ID, userID)
	if errors.Is(err, errUnitBack) { // no payment window: never, but for a restock
		err = fmt.Errorf("product %d: %w", p.ID, inventory.ErrSoldOut)
	}
	return err
}
