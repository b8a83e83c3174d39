package order

import (
	"context"
)

// OrderOf returns the user's live order of the product, else the latest ended. Errors:
// inventory.ErrNotFound, ErrOrderNotFound, ErrUnavailable.
func (s *Service) OrderOf(ctx context.Context, productID, userID int64) (Order, error) {
	if _, err := s.c.products.Meta(ctx, productID); err != nil {
		return Order{}, classify(err)
	}
	o, err := latestOrder(s.c.db.WithContext(ctx), productID, userID)
	return o, classify(err)
}
