package order

import (
	"context"
	"errors"
	"math"
	"slices"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// endedList names, in buyerLists, the list of a product whose sale ended (no mark has it).
const endedList = math.MaxUint64

// ended answers a buyer of product p, whose sale window ended (refusal: its *WindowError):
// with the order the user holds, as a *PurchasedError, else refusal. Once no purchase can
// still commit, a buyer without an order is answered from memory.
func (c *core) ended(ctx context.Context, p inventory.Product, userID int64, refusal error) error {
	// The last purchase's COMMIT: an early end (Store.End) reaches every process within a lease.
	settled := p.EndsAt.Add(inventory.ControlLease + c.cfg.PurchaseTimeout + AfterDeadline)
	if time.Now().After(settled) {
		l, err := c.lists.of(ctx, c.db, p.ID, endedList)
		if err != nil {
			return err
		}
		if _, found := slices.BinarySearch(l.users, userID); l.all && !found {
			return refusal
		}
	}
	o, err := orderOf(c.db.WithContext(ctx), p.ID, userID)
	switch {
	case err == nil:
		return &PurchasedError{Order: o}
	case errors.Is(err, ErrOrderNotFound):
		return refusal
	}
	return err
}
