package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// Errors of Pay and Cancel, each as a *StateError holding the order.
var (
	// ErrOrderExpired: unpaid by its pay_by; its unit goes back to stock.
	ErrOrderExpired = errors.New("order: reservation expired")
	// ErrOrderCancelled: cancelled; its unit went back to stock.
	ErrOrderCancelled = errors.New("order: reservation cancelled")
	// ErrOrderPaid: paid, or final from the start, so it cannot be cancelled.
	ErrOrderPaid = errors.New("order: already paid")
)

// StateError is a Pay or Cancel refused by the order's status; it matches its sentinel.
type StateError struct {
	Order Order
	err   error
}

func (e *StateError) Error() string {
	return fmt.Sprintf("order %d (user %d, product %d): %v", e.Order.ID, e.Order.UserID, e.Order.ProductID, e.err)
}

// Unwrap makes a *StateError match its sentinel.
func (e *StateError) Unwrap() error { return e.err }

// refusal is the error of an order whose status is final and not the one asked for, or nil
// when o's status is want.
func refusal(o Order, want string) error {
	switch o.Status {
	case want:
		return nil
	case StatusExpired:
		return &StateError{o, ErrOrderExpired}
	case StatusCancelled:
		return &StateError{o, ErrOrderCancelled}
	case StatusPaid:
		return &StateError{o, ErrOrderPaid}
	}
	return fmt.Errorf("order %d: unexpected status %q", o.ID, o.Status)
}

// Pay pays the user's reservation of the product and returns it; it is idempotent. Errors:
// ErrOrderExpired, ErrOrderCancelled, ErrOrderNotFound, inventory.ErrNotFound,
// ErrUnavailable, ErrOutcomeUnknown (paying again tells).
func (s *Service) Pay(ctx context.Context, productID, userID int64) (Order, error) {
	ctx, cancel := context.WithTimeout(ctx, s.c.cfg.PurchaseTimeout)
	defer cancel()
	p, o, err := s.reservation(ctx, productID, userID)
	if err != nil {
		return Order{}, classify(err)
	}
	if o.Status != StatusPending {
		return o, refusal(o, StatusPaid)
	}
	var paid []Order
	err = s.c.runTx(ctx, func(tx *gorm.DB) error {
		return tx.Raw(`WITH t AS (SELECT clock_timestamp() AS at)
			UPDATE orders SET status = 'paid', paid_at = t.at FROM t
			WHERE id = ? AND status = 'pending' AND pay_by > t.at
			RETURNING `+orderColumns, o.ID).Scan(&paid).Error
	})
	if err != nil {
		return Order{}, reservationError(err)
	}
	if len(paid) == 1 {
		return paid[0], nil
	}
	// Past its pay_by, or ended or paid meanwhile: expire it if nobody has, then tell.
	o, err = s.end(ctx, p, o)
	if err != nil {
		return Order{}, err
	}
	return o, refusal(o, StatusPaid)
}

// Cancel cancels the user's reservation, returning its unit, and returns it; it is idempotent.
// Errors: ErrOrderPaid, ErrOrderExpired, ErrOrderNotFound, inventory.ErrNotFound,
// ErrUnavailable, ErrOutcomeUnknown.
func (s *Service) Cancel(ctx context.Context, productID, userID int64) (Order, error) {
	ctx, cancel := context.WithTimeout(ctx, s.c.cfg.PurchaseTimeout)
	defer cancel()
	p, o, err := s.reservation(ctx, productID, userID)
	if err != nil {
		return Order{}, classify(err)
	}
	if o.Status != StatusPending {
		return o, refusal(o, StatusCancelled)
	}
	o, err = s.end(ctx, p, o)
	if err != nil {
		return Order{}, err
	}
	return o, refusal(o, StatusCancelled)
}

// reservation reads the product and the user's live order of it, else the latest.
func (s *Service) reservation(ctx context.Context, productID, userID int64) (inventory.Product, Order, error) {
	p, err := s.c.products.Meta(ctx, productID)
	if err != nil {
		return p, Order{}, err
	}
	o, err := latestOrder(s.c.db.WithContext(ctx), productID, userID)
	return p, o, err
}

// end ends the pending order o (cancelled before its pay_by, else expired), giving its unit
// back once, and returns the order as it is then: ended by this call or by another (a
// sweeper, a cancel), or paid meanwhile.
func (s *Service) end(ctx context.Context, p inventory.Product, o Order) (Order, error) {
	ended, err := s.returns.end(ctx, p, ending{id: o.ID})
	if err != nil {
		return Order{}, reservationError(err)
	}
	var now []Order
	if err := s.c.db.WithContext(ctx).Raw(`SELECT `+orderColumns+` FROM orders WHERE id = ?`, o.ID).Scan(&now).Error; err != nil {
		return Order{}, classify(fmt.Errorf("read order %d: %w", o.ID, err))
	}
	if len(now) == 0 {
		return Order{}, fmt.Errorf("order %d vanished", o.ID)
	}
	if len(ended) == 1 {
		s.c.observer.Returned(now[0].Status, 1)
	}
	return now[0], nil
}

// overdue returns the reservation of product p that err, a purchase's answer, says the buyer
// holds, if that reservation is pending and past its pay_by on this process's clock (PostgreSQL's
// decides: see rebuy).
func overdue(p inventory.Product, err error) (Order, bool) {
	var pe *PurchasedError
	if p.PayWithinMS == 0 || !errors.As(err, &pe) || pe.Order.Status != StatusPending || pe.Order.PayBy == nil {
		return Order{}, false
	}
	return pe.Order, !time.Now().Before(*pe.Order.PayBy)
}

// rebuy ends the buyer's reservation old, which the purchase found past its pay_by, as the
// sweeper would (expired, its unit back once, to the gate too), then buys again with attempt:
// a buyer is never answered with a reservation that can no longer be paid. A reservation
// PostgreSQL finds not yet due (the clocks differ) stays, and so does the answer.
func (s *Service) rebuy(ctx context.Context, p inventory.Product, old Order,
	attempt func(context.Context) (Order, error),
) (Order, error) {
	ended, err := s.returns.end(ctx, p, ending{id: old.ID, dueOnly: true})
	if err != nil {
		return Order{}, reservationError(err)
	}
	s.c.observer.Returned(StatusExpired, len(ended))
	return attempt(ctx)
}

// reservationError is the documented error of a payment or a return that failed: a COMMIT
// that got no answer is ErrOutcomeUnknown (asking again tells: both are idempotent).
func reservationError(err error) error {
	if errors.Is(err, errCommitUnknown) {
		return fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return fmt.Errorf("%w: %w", ErrBusy, err)
	}
	return classify(err)
}

// latestOrder reads user's live order of product in tx, else the latest that ended, or
// returns ErrOrderNotFound.
func latestOrder(tx *gorm.DB, productID, userID int64) (Order, error) {
	var o []Order
	err := tx.Raw(`SELECT `+orderColumns+` FROM (
		(SELECT `+orderColumns+`, true AS live FROM orders WHERE product_id = @p AND user_id = @u AND `+liveStatus+` LIMIT 1)
		UNION ALL
		(SELECT `+orderColumns+`, false FROM orders WHERE product_id = @p AND user_id = @u
			AND status IN ('expired', 'cancelled') ORDER BY id DESC LIMIT 1)
		) o ORDER BY live DESC LIMIT 1`, map[string]any{"p": productID, "u": userID}).Scan(&o).Error
	if err != nil {
		return Order{}, fmt.Errorf("read order of user %d, product %d: %w", userID, productID, err)
	}
	if len(o) == 0 {
		return Order{}, fmt.Errorf("user %d, product %d: %w", userID, productID, ErrOrderNotFound)
	}
	return o[0], nil
}
