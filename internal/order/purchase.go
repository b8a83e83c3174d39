package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// Purchase sells one unit of the product to the user and returns the committed order. Errors:
// inventory.ErrNotFound, inventory.ErrSoldOut, a *inventory.WindowError, a *inventory.LineError, a *inventory.PausedError, ErrAlreadyPurchased, ErrBusy,
// ErrUnavailable, ErrCanceled, ErrAccepted (queued), ErrOutcomeUnknown (the only one that may have written).
func (s *Service) Purchase(ctx context.Context, productID, userID int64) (Order, error) {
	var o Order
	err := s.bounded(ctx, func(pctx context.Context) (inventory.Strategy, error) {
		p, err := s.c.products.Meta(pctx, productID)
		if err != nil {
			return p.Strategy, err
		}
		if err := p.OnSale(time.Now()); err != nil {
			if errors.Is(err, inventory.ErrEnded) { // a retry of a buyer who has an order too
				err = s.c.ended(pctx, p, userID, err)
			}
			return p.Strategy, err
		}
		if err := p.Paused(); err != nil { // docs/api.md#merchants-controls
			return p.Strategy, err
		}
		if err := s.admitted(pctx, p, userID); err != nil { // the line, if p has one
			return p.Strategy, err
		}
		attempt := func(ctx context.Context) (Order, error) {
			if s.c.soldOut.Is(productID) {
				err := s.soldOut(ctx, productID, userID) // a retry of a buyer who has an order too
				if !errors.Is(err, errUnitBack) {
					return Order{}, err
				}
			}
			return s.buy(ctx, p, userID)
		}
		o, err = attempt(pctx)
		if old, ok := overdue(p, err); ok { // a reservation nobody has expired yet
			o, err = s.rebuy(pctx, p, old, attempt)
		}
		return p.Strategy, err
	})
	return o, err
}

// PurchaseBundle buys one unit of each of up to MaxBundle dlock products, all or nothing
// (docs/api.md#bundles). Errors: Purchase's, inventory.ErrInvalid, or a *ProductError.
func (s *Service) PurchaseBundle(ctx context.Context, productIDs []int64, userID int64) ([]Order, error) {
	var orders []Order
	err := s.bounded(ctx, func(pctx context.Context) (inventory.Strategy, error) {
		var err error
		orders, err = s.locked.buyBundle(pctx, productIDs, userID)
		return "bundle", err
	})
	return orders, err
}

// bounded runs one purchase, buy, on ctx with the purchase's own deadline
// (Config.PurchaseTimeout), turns its error into one of Purchase's documented errors (see
// explain) and reports it to the Observer under the strategy buy returns.
func (s *Service) bounded(ctx context.Context, buy func(pctx context.Context) (inventory.Strategy, error)) error {
	start := time.Now()
	deadline := start.Add(s.c.cfg.PurchaseTimeout)
	pctx, cancel := context.WithDeadlineCause(context.WithValue(ctx, deadlineKey{}, deadline), deadline, errDeadline)
	defer cancel()
	strategy, err := buy(pctx)
	err = explain(ctx, pctx, err)
	s.c.observer.Purchased(strategy, Outcome(err), time.Since(start))
	return err
}

// deadlineKey is the context key of a purchase's own deadline (see detach).
type deadlineKey struct{}

// explain turns the error of a purchase on pctx (ctx with the purchase's deadline) into one
// of Purchase's documented errors: an error that stems from the context's end is ErrCanceled
// when the buyer went away, ErrBusy when the deadline passed.
func explain(ctx, pctx context.Context, err error) error {
	if err == nil || errors.Is(err, ErrOutcomeUnknown) {
		return err
	}
	ended := errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	switch {
	case ended && ctx.Err() != nil:
		return fmt.Errorf("%w: %w", ErrCanceled, err)
	case ended && pctx.Err() != nil:
		return fmt.Errorf("%w: %w", errDeadline, err)
	}
	return classify(err)
}

// buy hands the purchase to the buyer of the product's strategy. A strategy this service
// does not sell (a lab product reaching the production build) is inventory.ErrInvalid.
func (s *Service) buy(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	if buy, ok := s.buyers[p.Strategy]; ok {
		return buy(ctx, p, userID)
	}
	return Order{}, fmt.Errorf("%w: product %d has strategy %q, which this build of the API does not sell", inventory.ErrInvalid, p.ID, p.Strategy)
}
