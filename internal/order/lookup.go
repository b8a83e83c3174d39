package order

import (
	"context"
)

// OrderOf returns user userID's committed order of product productID: the live one, else the
// latest ended; it tells a client whose purchase got no answer. Its errors match
// inventory.ErrNotFound, ErrOrderNotFound or ErrUnavailable.
func (s *Service) OrderOf(ctx context.Context, productID, userID int64) (Order, error) {
	if _, err := s.c.products.Meta(ctx, productID); err != nil {
		return Order{}, classify(err)
	}
	o, err := latestOrder(s.c.db.WithContext(ctx), productID, userID)
	return o, classify(err)
}
