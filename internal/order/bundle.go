package order

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// MaxBundle is the most products one bundle purchase may name.
const MaxBundle = 10

// ProductError wraps the error of the bundle's product that failed it.
type ProductError struct {
	ProductID int64
	Err       error
}

func (e *ProductError) Error() string { return fmt.Sprintf("product %d: %v", e.ProductID, e.Err) }
func (e *ProductError) Unwrap() error { return e.Err }

// buyBundle is PurchaseBundle's purchase: the locked buyer's, since bundles are for dlock
// products.
func (l *lockedBuyer) buyBundle(ctx context.Context, productIDs []int64, userID int64) ([]Order, error) {
	ids := slices.Sorted(slices.Values(productIDs))
	switch {
	case len(ids) == 0 || len(ids) > MaxBundle:
		return nil, fmt.Errorf("%w: a bundle names 1 to %d products", inventory.ErrInvalid, MaxBundle)
	case len(slices.Compact(slices.Clone(ids))) != len(ids):
		return nil, fmt.Errorf("%w: a bundle names each product once", inventory.ErrInvalid)
	}
	keys := make([]string, len(ids))
	idOf := make(map[string]int64, len(ids)) // lock key -> product: dlock orders locks by key
	for i, id := range ids {
		p, err := l.products.Meta(ctx, id)
		if err != nil {
			return nil, &ProductError{id, err}
		}
		if p.Strategy != inventory.StrategyDlock || p.Fair || p.PayWithinMS > 0 {
			return nil, fmt.Errorf("%w: product %d: bundles are for dlock products that are not fair and have no payment window",
				inventory.ErrInvalid, id)
		}
		if err := p.OnSale(time.Now()); err != nil {
			// Ended, unless the user holds an order of it: the transaction then answers
			// already purchased (a retry of this bundle).
			var had *PurchasedError
			if errors.Is(err, inventory.ErrEnded) {
				err = l.ended(ctx, p, userID, err)
			}
			if !errors.As(err, &had) {
				return nil, &ProductError{id, err}
			}
		}
		if err := p.Paused(); err != nil {
			return nil, &ProductError{id, err}
		}
		if l.soldOut.Is(id) {
			// Sold out, unless the user holds an order of it (a retry of this bundle, say):
			// the transaction then answers already purchased, as for a product in stock.
			maybe, err := l.lists.maybeBuyer(ctx, l.db, id, userID)
			if err != nil {
				return nil, err
			}
			if !maybe {
				return nil, &ProductError{id, inventory.ErrSoldOut}
			}
		}
		keys[i] = l.keys.Lock(id)
		idOf[keys[i]] = id
	}
	var (
		byID map[int64]Order
		left []int
	)
	// A key lost before COMMIT cancels the statements, and DoMulti joins ErrLost to their
	// error: busy. Once the orders are committed they stand (written under fences no newer
	// holder had overtaken), and the buyer is told so, whatever the release then finds.
	waitCtx, spans := l.startBundleSpans(ctx, ids)
	err := l.locks.DoMulti(waitCtx, keys, l.cfg.LockTTL, l.cfg.LockWait,
		func(ctx context.Context, locks map[string]HeldLock) error {
			held := make(map[int64]HeldLock, len(ids))
			for key, lock := range locks {
				held[idOf[key]] = lock
			}
			ctx = spans.held(ctx, 0)
			var err error
			byID, left, err = l.writeBundle(ctx, ids, fencesOf(held), userID)
			var pe *ProductError
			if errors.As(err, &pe) && l.raised(ctx, pe.ProductID, held[pe.ProductID], err) {
				byID, left, err = l.writeBundle(ctx, ids, fencesOf(held), userID) // see writeHeld
			}
			return err
		})
	spans.end(nil, err)
	if byID != nil && err != nil {
		l.log.WarnContext(ctx, "after a committed bundle", "product_ids", ids, "err", err)
	} else if err != nil {
		if errors.Is(err, inventory.ErrFenced) {
			l.log.WarnContext(ctx, "write refused: a product of the bundle was written under a newer lock fence",
				"product_ids", ids, "user_id", userID, "err", err)
		}
		return nil, err
	}
	for i, id := range ids {
		l.soldOutIfZero(ctx, id, left[i])
	}
	out := make([]Order, len(productIDs))
	for i, id := range productIDs {
		out[i] = byID[id]
	}
	return out, nil
}

// fencesOf is each product's lock's fence.
func fencesOf(held map[int64]HeldLock) map[int64]int64 {
	fences := make(map[int64]int64, len(held))
	for id, l := range held {
		fences[id] = l.Fence()
	}
	return fences
}

// writeBundle writes the bundle in one transaction under the products' locks (fences: each
// product's lock's fence), and finds out what became of a COMMIT that got no answer. It
// returns the orders by product and the stock left of each product, in the order of ids; the
// orders are nil unless committed.
func (l *lockedBuyer) writeBundle(ctx context.Context, ids []int64, fences map[int64]int64, userID int64) (map[int64]Order, []int, error) {
	release, err := l.slots.acquire(ctx, ids[0], "bundle")
	if err != nil {
		return nil, nil, err
	}
	defer release()
	byID := make(map[int64]Order, len(ids))
	left := make([]int, len(ids))
	err = l.runTx(ctx, func(tx *gorm.DB) error {
		for i, id := range ids {
			o, err := insertOrder(tx, id, userID)
			if err != nil {
				return &ProductError{id, err}
			}
			if left[i], err = inventory.DecrementFenced(tx, id, 1, fences[id]); err != nil {
				return &ProductError{id, err}
			}
			byID[id] = o
		}
		return nil
	})
	// One transaction: its first order tells for all (settleOrders asks only after a COMMIT
	// that got no answer).
	if err = l.settleOrders(ctx, ids[0], []Order{byID[ids[0]]}, err); err != nil {
		return nil, nil, err
	}
	return byID, left, nil
}
