package order

import (
	"context"
)

// OrderOf returns user userID's order of product productID as PostgreSQL has it committed
// now: the live one (pending or paid), else the latest that ended (expired or cancelled), or an error matching inventory.ErrNotFound (no such product), ErrOrderNotFound or
// ErrUnavailable. A client that got no answer, or an ErrOutcomeUnknown, can ask it; retrying
// the purchase also tells, and never buys twice.
func (s *Service) OrderOf(ctx context.Context, productID, userID int64) (Order, error) {
	if _, err := s.c.products.Meta(ctx, productID); err != nil {
		return Order{}, classify(err)
	}
	o, err := latestOrder(s.c.db.WithContext(ctx), productID, userID)
	return o, classify(err)
}
