// Package order owns orders and the purchase service. Service keeps what every purchase
// shares (product metadata, the sold-out mark, the observer, lookups and audits) and hands
// each purchase to its strategy's buyer, a type that holds only that strategy's state: the
// locked buyer (dlock, and bundles), the gated buyer (redis), the queued buyer (queue), the
// row-lock buyer (pessimistic, optimistic), and the Strategies plugged in from outside (the lab
// build's teaching ones, internal/labapi). The locks it takes are the Locker it declares,
// which internal/app fills; it never imports the HTTP layer, etcd's lock or the lab.
//
// An order of a product with a payment window is a reservation (reservation.go): pending
// until paid (Pay), or ended, cancelled (Cancel) or expired (the sweeper, sweep.go), its unit
// given back exactly once by one conditional transition in PostgreSQL, and to the Redis gate
// of the redis and queue strategies once per order (returns.go).
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
	// ErrAlreadyPurchased: the user has a live order of the product, held by the *PurchasedError.
	ErrAlreadyPurchased = errors.New("order: already purchased")
	// ErrBusy: no lock or connection in time, or the deadline passed. Nothing was written; retry.
	ErrBusy = errors.New("order: busy")
	// ErrUnavailable: Redis or PostgreSQL is down. Nothing was written.
	ErrUnavailable = errors.New("order: service unavailable")
	// ErrOutcomeUnknown: the write got no answer. OrderOf tells; a retry never buys twice.
	ErrOutcomeUnknown = errors.New("order: outcome unknown")
	// ErrCanceled: ctx was cancelled before the write. Nothing was written.
	ErrCanceled = errors.New("order: canceled by the buyer")
	// ErrOrderNotFound: OrderOf found no order of this user for this product.
	ErrOrderNotFound = errors.New("order: no such order")
)

// ErrLockLost is a Locker's or Strategy's error for a lock lost while held; Purchase answers ErrBusy.
var ErrLockLost = errors.New("order: product lock lost")

// errDeadline is the cause of a purchase's context when its deadline (Config.PurchaseTimeout)
// passes: the purchase is then busy, and writes nothing.
var errDeadline = fmt.Errorf("%w: purchase deadline passed", ErrBusy)

// errPanic marks the answer of a buyer whose batch leader panicked before the batch's
// outcome was known: a bug, and nothing of theirs was committed.
var errPanic = errors.New("order: batch leader panicked")

// PurchasedError matches ErrAlreadyPurchased and holds the user's order.
type PurchasedError struct {
	Order Order
}

func (e *PurchasedError) Error() string {
	return fmt.Sprintf("user %d, product %d: %v as order %d", e.Order.UserID, e.Order.ProductID, ErrAlreadyPurchased, e.Order.ID)
}

// Unwrap makes a *PurchasedError match ErrAlreadyPurchased.
func (e *PurchasedError) Unwrap() error { return ErrAlreadyPurchased }

// Order is a row of the orders table.
type Order struct {
	ID        int64
	ProductID int64
	UserID    int64
	CreatedAt time.Time
	// Status is one of the Status constants; without a payment window, StatusPaid.
	Status string
	PayBy  *time.Time // set exactly when the order is or was pending
	PaidAt *time.Time // when a pending order was paid
	// EndedAt is when the order expired or was cancelled.
	EndedAt *time.Time
}

// Order statuses; pending and paid are live, one per user and product.
const (
	StatusPaid      = "paid"
	StatusPending   = "pending"
	StatusExpired   = "expired"
	StatusCancelled = "cancelled"
)

// orderColumns are the columns an Order is read from.
const orderColumns = `id, product_id, user_id, created_at, status, pay_by, paid_at, ended_at`

// liveStatus is the predicate of the live orders, which the unique index orders_live_key
// covers: every ON CONFLICT (product_id, user_id) and every lookup of a buyer's order names it.
const liveStatus = `status IN ('pending', 'paid')`

// TableName maps Order to its table for GORM.
func (Order) TableName() string { return "orders" }

// Outcomes of a purchase, as metrics count them.
const (
	OutcomeBought           = "bought"
	OutcomeSoldOut          = "sold_out"
	OutcomeNotStarted       = "sale_not_started"
	OutcomeEnded            = "sale_ended"
	OutcomePaused           = "sale_paused"
	OutcomeNotYourTurn      = "not_your_turn"
	OutcomePlaceExpired     = "place_expired"
	OutcomeAlreadyPurchased = "already_purchased"
	OutcomeBusy             = "busy"
	OutcomeNotFound         = "not_found"
	OutcomeUnavailable      = "unavailable"
	OutcomeUnknown          = "outcome_unknown"
	OutcomeCanceled         = "canceled"
	OutcomeAccepted         = "accepted"
	OutcomeError            = "error"
)

// Outcome names the result of a purchase that returned err.
func Outcome(err error) string {
	if err == nil {
		return OutcomeBought
	}
	for _, o := range outcomes {
		if errors.Is(err, o.err) {
			return o.name
		}
	}
	return OutcomeError
}

// outcomes names the errors a purchase returns, in the order Outcome tries them (a wrapped
// error may match more than one: the first wins).
var outcomes = []struct {
	err  error
	name string
}{
	{ErrAccepted, OutcomeAccepted},
	{ErrOutcomeUnknown, OutcomeUnknown},
	{ErrCanceled, OutcomeCanceled},
	{inventory.ErrSoldOut, OutcomeSoldOut},
	{inventory.ErrNotStarted, OutcomeNotStarted},
	{inventory.ErrEnded, OutcomeEnded},
	{inventory.ErrPaused, OutcomePaused},
	{inventory.ErrNotYourTurn, OutcomeNotYourTurn},
	{inventory.ErrPlaceExpired, OutcomePlaceExpired},
	{ErrAlreadyPurchased, OutcomeAlreadyPurchased},
	{ErrBusy, OutcomeBusy},
	{inventory.ErrNotFound, OutcomeNotFound},
	{ErrUnavailable, OutcomeUnavailable},
}

// insertOrder records user's order of product in tx, or returns a *PurchasedError with the
// order the user has. ON CONFLICT keeps the transaction usable (a failed INSERT would abort
// it) and waits for a concurrent transaction inserting the same order to end, so the order it
// reports is committed.
func insertOrder(tx *gorm.DB, productID, userID int64) (Order, error) {
	var o []Order
	err := tx.Raw(`INSERT INTO orders (product_id, user_id) VALUES (?, ?)
		ON CONFLICT (product_id, user_id) WHERE `+liveStatus+` DO NOTHING
		RETURNING `+orderColumns, productID, userID).Scan(&o).Error
	if err != nil {
		return Order{}, fmt.Errorf("insert order: %w", err)
	}
	if len(o) == 1 {
		return o[0], nil
	}
	had, err := orderOf(tx, productID, userID)
	if err != nil {
		return Order{}, err
	}
	return Order{}, &PurchasedError{Order: had}
}

// orderOf reads user's live order (pending or paid) of product in tx, or returns
// ErrOrderNotFound: what a purchase's "already purchased" answers with.
func orderOf(tx *gorm.DB, productID, userID int64) (Order, error) {
	o, _, err := orderAndEntryOf(tx, productID, userID)
	return o, err
}

// orderAndEntryOf is orderOf with the queue's stream entry the order was written from ("" for
// an order not written from the queue).
func orderAndEntryOf(tx *gorm.DB, productID, userID int64) (Order, string, error) {
	var rows []struct {
		Order
		QueueEntry *string
	}
	err := tx.Raw(`SELECT `+orderColumns+`, queue_entry FROM orders
		WHERE product_id = ? AND user_id = ? AND `+liveStatus, productID, userID).Scan(&rows).Error
	if err != nil {
		return Order{}, "", fmt.Errorf("read order of user %d, product %d: %w", userID, productID, err)
	}
	if len(rows) == 0 {
		return Order{}, "", fmt.Errorf("user %d, product %d: %w", userID, productID, ErrOrderNotFound)
	}
	entry := ""
	if rows[0].QueueEntry != nil {
		entry = *rows[0].QueueEntry
	}
	return rows[0].Order, entry, nil
}

// classify turns infrastructure failures into ErrUnavailable and a lost lock into ErrBusy,
// keeping the original error in the chain for the log.
func classify(err error) error {
	switch {
	case err == nil, answered(err), errors.Is(err, ErrBusy), errors.Is(err, ErrUnavailable),
		errors.Is(err, ErrOutcomeUnknown), errors.Is(err, ErrCanceled), errors.Is(err, ErrAccepted):
		return err
	case errors.Is(err, dlock.ErrNotObtained), lost(err), errors.Is(err, inventory.ErrFenced):
		return fmt.Errorf("%w: %w", ErrBusy, err)
	case errors.Is(err, dlock.ErrFairRedlock): // a fair product, sold by an API moved to Redlock
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	case IsUnavailable(err):
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// answered reports whether err is an answer about the sale itself: sold out, outside the sale
// window, already bought, no such product or order. It never means an outage, so classify looks no further. Sold out
// is most of a flash sale's answers, and the outage checks (errors.As by reflection along the
// chain, each go-redis error reply test) cost each one 2.6-3.8 us and 24 allocations
// (BenchmarkExplainSoldOut).
func answered(err error) bool {
	return errors.Is(err, inventory.ErrSoldOut) || errors.Is(err, ErrAlreadyPurchased) ||
		errors.Is(err, inventory.ErrNotFound) || errors.Is(err, ErrOrderNotFound) ||
		errors.Is(err, inventory.ErrNotStarted) || errors.Is(err, inventory.ErrEnded) ||
		errors.Is(err, inventory.ErrNotYourTurn) || errors.Is(err, inventory.ErrPlaceExpired) || errors.Is(err, inventory.ErrNoLine) ||
		errors.Is(err, inventory.ErrPaused)
}

// lost reports whether err says a product lock was lost while held, in any backend (see
// Locker).
func lost(err error) bool { return errors.Is(err, dlock.ErrLost) || errors.Is(err, ErrLockLost) }
