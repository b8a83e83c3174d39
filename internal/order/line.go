package order

import (
	"context"
	"errors"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// admitted returns nil if p has no line or userID's place in it is called now (joining the
// line first if userID has none). Otherwise a *inventory.LineError, inventory.ErrSoldOut (a
// place not called, of a product marked sold out), a *PurchasedError (an expired place of a
// buyer who holds an order: the retry rule), or Redis's error.
func (s *Service) admitted(ctx context.Context, p inventory.Product, userID int64) error {
	if !p.HasLine() {
		return nil
	}
	err := s.line.Admit(ctx, p, userID)
	if errors.Is(err, inventory.ErrNotYourTurn) && s.c.soldOut.Is(p.ID) {
		// Nothing to wait for: say so now, unless a unit came back (then the turn decides).
		if serr := s.soldOut(ctx, p.ID, userID); !errors.Is(serr, errUnitBack) {
			return serr
		}
	}
	if !errors.Is(err, inventory.ErrPlaceExpired) {
		return err
	}
	o, oerr := orderOf(s.c.db.WithContext(ctx), p.ID, userID)
	switch {
	case oerr == nil:
		return &PurchasedError{Order: o}
	case errors.Is(oerr, ErrOrderNotFound):
		return err
	}
	return oerr
}

// JoinLine gives userID a place in the line of the product (if it has none) and returns it.
// Errors: inventory.ErrNotFound, inventory.ErrNoLine, a *inventory.WindowError (ErrEnded),
// ErrUnavailable.
func (s *Service) JoinLine(ctx context.Context, productID, userID int64) (inventory.Place, error) {
	return s.linePlace(ctx, productID, userID, true)
}

// LinePlace returns userID's place in the line of the product, joining nothing. Errors:
// inventory.ErrNotFound, inventory.ErrNoLine, ErrUnavailable.
func (s *Service) LinePlace(ctx context.Context, productID, userID int64) (inventory.Place, error) {
	return s.linePlace(ctx, productID, userID, false)
}

func (s *Service) linePlace(ctx context.Context, productID, userID int64, join bool) (inventory.Place, error) {
	p, err := s.c.products.Meta(ctx, productID)
	if err != nil {
		return inventory.Place{}, classify(err)
	}
	var pl inventory.Place
	if join {
		if err := p.OnSale(time.Now()); errors.Is(err, inventory.ErrEnded) {
			return pl, err
		}
		pl, err = s.line.Join(ctx, p, userID)
	} else {
		pl, err = s.line.Peek(ctx, p, userID)
	}
	return pl, classify(err)
}
