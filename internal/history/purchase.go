package history

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/seckill/seckill/internal/api"
)

// Purchase is one purchase request of one buyer: POST /api/v1/products/{Product}/purchase
// for User, and what came of it.
type Purchase struct {
	Product int64     `json:"product"`
	User    int64     `json:"user"`
	Invoke  time.Time `json:"invoke"` // when the request was sent
	// Complete is when its answer was read; zero when none was (refused, cut, timed out).
	Complete time.Time `json:"complete,omitzero"`
	// Outcome is OK for a 201, Fail for an answer that says nothing was bought (409 sold_out
	// or already_purchased, or a refusal that wrote nothing), Unknown for no answer, a 202
	// (queued, written later) or a 503 outcome_unknown. PurchaseOutcome maps an answer to it.
	Outcome string `json:"outcome"`
	Status  int    `json:"status,omitempty"`  // the HTTP status, 0 for no answer
	Code    string `json:"code,omitempty"`    // the problem's code, if any
	Order   int64  `json:"order,omitempty"`   // the order a 201 or already_purchased named
	Process string `json:"process,omitempty"` // the API process asked, if known
}

// PurchaseOutcome is the outcome of a purchase answered with status and problem code (status
// 0: no answer). Only a 201 bought; a 409 and the answers the API documents as writing
// nothing (503 busy and unavailable, 429, the other 4xx) failed; anything else may or may
// not have written an order.
func PurchaseOutcome(status int, code string) string {
	switch {
	case status == http.StatusCreated:
		return OK
	case status == http.StatusServiceUnavailable && (code == api.CodeBusy || code == api.CodeUnavailable),
		status >= 400 && status < 500:
		return Fail
	}
	return Unknown // no answer, 202 queued, 503 outcome_unknown, any other 5xx
}

// Sale is what the purchase checker knows besides the history.
type Sale struct {
	// Stock is each product's stock before the sale. Every product of the history needs one.
	Stock map[int64]int
	// Orders is PostgreSQL's truth once every purchase has settled (a queue drained): each
	// product's buyers with an order (user → order id). It resolves the unknown outcomes and
	// judges each buyer's answers; nil leaves them open. When not nil, it has every product
	// of the history not in Reservations.
	Orders map[int64]map[int64]int64
	// Reservations is, for the products sold with a payment window, what Orders is for the
	// others, once every purchase settled: each buyer's orders, oldest first (product → user
	// → order ids), for a buyer whose reservation ended may buy again. A product is in one of
	// Orders and Reservations at most. Each product of Reservations has the units that came
	// back in Returns (see CheckPurchases).
	Reservations map[int64]map[int64][]int64
	// Returns are the units given back to the stock of the products of Reservations, one per
	// reservation that expired or was cancelled.
	Returns []Return
	// Written is, for orders of Reservations, a moment by which each was surely written (its
	// unit taken): when a reader first saw it, say. The unknown request that stands for an
	// order takes its unit no later; without one, at any time after its invoke.
	Written map[int64]time.Time
}

// CheckPurchases checks a history of purchases against a stock model, per product, with porcupine,
// holding each answer to its buyer's orders when sale has them, and returns what it found; timeout
// and dir are as for CheckLocks. The error is for a malformed history or a page that could not be
// written (docs/testing.md#the-checkers-rules). It is safe for concurrent use.
func CheckPurchases(ops []Purchase, sale Sale, timeout time.Duration, dir string) (Result, error) {
	begun := time.Now()
	for i, op := range ops {
		if err := validPurchase(op, sale); err != nil {
			return Result{}, fmt.Errorf("purchase %d: %w", i, err)
		}
	}
	for product := range sale.Orders {
		if _, ok := sale.Stock[product]; !ok {
			return Result{}, fmt.Errorf("product %d has orders but no stock given", product)
		}
	}
	if err := validReturns(sale); err != nil {
		return Result{}, err
	}
	var plain, returning []Purchase // the products without returns, and with
	for _, op := range ops {
		if _, ok := sale.Reservations[op.Product]; ok {
			returning = append(returning, op)
		} else {
			plain = append(plain, op)
		}
	}
	buys, dropped := resolve(plain, sale)
	back, more := resolveReservations(returning, sale)
	reasons := append(untruths(slices.Concat(buys, back)), counts(buys, sale.Stock)...)
	reasons = append(reasons, returnedTwice(sale.Returns)...)
	search, settled := settling(buys, sale.Stock)
	search, dropped = append(search, back...), dropped+more
	res, err := check(purchaseModel, operations(search), dropped, reasons, begun, timeout, dir, "purchases")
	res.Settled = settled
	return res, err
}

// counts and settling are refute and settle; the tests turn them off to hold porcupine
// alone to the model.
var counts, settling = refute, settle

func (s Sale) hasOrder(product, user int64) bool {
	_, ok := s.Orders[product][user]
	return ok
}

func validPurchase(op Purchase, sale Sale) error {
	who := fmt.Sprintf("of user %d", op.User)
	if _, ok := sale.Stock[op.Product]; !ok {
		return fmt.Errorf("%s: product %d has no stock given", who, op.Product)
	}
	_, orders := sale.Orders[op.Product]
	_, reserved := sale.Reservations[op.Product]
	switch {
	case sale.Orders != nil && !orders && !reserved:
		return fmt.Errorf("%s: product %d has no orders given (Sale.Orders has other products')", who, op.Product)
	case !slices.Contains([]string{OK, Fail, Unknown}, op.Outcome):
		return fmt.Errorf("%s: unknown outcome %q", who, op.Outcome)
	case op.Invoke.IsZero():
		return fmt.Errorf("%s has no invoke time", who)
	case op.Outcome != Unknown && op.Complete.IsZero():
		return fmt.Errorf("%s is %s but has no completion time", who, op.Outcome)
	case !op.Complete.IsZero() && op.Complete.Before(op.Invoke):
		return fmt.Errorf("%s completes before its invoke", who)
	}
	return nil
}
