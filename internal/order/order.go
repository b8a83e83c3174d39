// Package order owns orders and the purchase service, which coordinates the lock, the stock
// (internal/inventory) and the order for every strategy. It never imports the HTTP layer.
package order

import (
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
)

// Errors returned by Purchase besides inventory.ErrNotFound and inventory.ErrSoldOut.
// Compare with errors.Is.
var (
	// ErrAlreadyPurchased: the user already has an order for this product.
	ErrAlreadyPurchased = errors.New("order: already purchased")
	// ErrBusy: the product's lock could not be had within the wait budget, or was lost
	// before the purchase committed. Nothing was written; the buyer may retry.
	ErrBusy = errors.New("order: busy")
	// ErrUnavailable: Redis or PostgreSQL could not be reached. Nothing was written.
	ErrUnavailable = errors.New("order: service unavailable")
)

// Order is a row of the orders table.
type Order struct {
	ID        int64     `json:"order_id"`
	ProductID int64     `json:"product_id"`
	UserID    int64     `json:"user_id"`
	CreatedAt time.Time `json:"created_at"`
}

// TableName maps Order to its table for GORM.
func (Order) TableName() string { return "orders" }

// Outcomes of a purchase, as counted in metrics and load-test reports.
const (
	OutcomeBought           = "bought"
	OutcomeSoldOut          = "sold_out"
	OutcomeAlreadyPurchased = "already_purchased"
	OutcomeBusy             = "busy"
	OutcomeNotFound         = "not_found"
	OutcomeUnavailable      = "unavailable"
	OutcomeError            = "error"
)

// Outcome names the result of a purchase that returned err.
func Outcome(err error) string {
	switch {
	case err == nil:
		return OutcomeBought
	case errors.Is(err, inventory.ErrSoldOut):
		return OutcomeSoldOut
	case errors.Is(err, ErrAlreadyPurchased):
		return OutcomeAlreadyPurchased
	case errors.Is(err, ErrBusy):
		return OutcomeBusy
	case errors.Is(err, inventory.ErrNotFound):
		return OutcomeNotFound
	case errors.Is(err, ErrUnavailable):
		return OutcomeUnavailable
	default:
		return OutcomeError
	}
}

// insertOrder records user's order of product in tx, or returns ErrAlreadyPurchased. ON
// CONFLICT keeps the transaction usable: a failed INSERT would abort it.
func insertOrder(tx *gorm.DB, productID, userID int64) (Order, error) {
	var o []Order
	err := tx.Raw(`INSERT INTO orders (product_id, user_id) VALUES (?, ?)
		ON CONFLICT (product_id, user_id) DO NOTHING
		RETURNING id, product_id, user_id, created_at`, productID, userID).Scan(&o).Error
	if err != nil {
		return Order{}, fmt.Errorf("insert order: %w", err)
	}
	if len(o) == 0 {
		return Order{}, fmt.Errorf("user %d, product %d: %w", userID, productID, ErrAlreadyPurchased)
	}
	return o[0], nil
}

// classify turns infrastructure failures into ErrUnavailable and a lost lock into ErrBusy,
// keeping the original error in the chain for the log.
func classify(err error) error {
	switch {
	case err == nil, errors.Is(err, ErrBusy), errors.Is(err, ErrUnavailable):
		return err
	case errors.Is(err, dlock.ErrNotObtained), errors.Is(err, dlock.ErrLost),
		errors.Is(err, inventory.ErrFenced):
		return fmt.Errorf("%w: %w", ErrBusy, err)
	case IsUnavailable(err):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}
