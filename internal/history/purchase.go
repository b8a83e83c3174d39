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

// CheckPurchases checks a history of purchases against a stock model, one product at a
// time, with porcupine, and returns what it found. It is safe for concurrent use.
//
// The model's state, per product, is the units left and the set of buyers with an order.
//   - OK (a 201) takes a unit: legal while one is left and the buyer has none.
//   - Fail with code sold_out is legal only if no unit is left AND the buyer has no order:
//     a buyer with an order is told already_purchased, even after the sale sold out.
//   - Fail with code already_purchased is legal only if the buyer's purchase came first.
//   - Any other Fail (a refusal that wrote nothing) is left out.
//   - Unknown (no answer, 202 queued, 503 outcome_unknown) may take effect at any time after
//     its invoke (porcupine: no completion). With sale.Orders, a buyer with an order and no
//     201 took its unit with its first unknown request, and its other unknown requests did
//     nothing; a buyer without an order: its unknown requests did nothing and are left out.
//     Without sale.Orders, an unknown request takes a unit if one is left and its buyer has
//     none, else does nothing; porcupine may place it last, where nothing can see it: "did
//     nothing" is always a legal order. (A take of unknown outcome is never bounded by when
//     PostgreSQL was read: placing a take later never makes another answer legal.)
//
// With sale.Orders (or sale.Reservations) each answer is also held to its buyer's orders
// (truth.go): a 201 whose buyer has none, a 201 or an already_purchased naming an order not
// the buyer's (Purchase.Order), and an order none of its buyer's requests can have made (each
// answered that nothing was written, or none sent) are untrue: operations the model never
// allows, named in Result.Reasons. Such an order is never placed as a legal take (see
// docs/testing.md, "Histories and the checker").
//
// A product sold with a payment window (in sale.Reservations) has returns too:
//   - a Return gives its unit back (the units left grow by one, its buyer has no order
//     again): legal only while its buyer has the order; it takes effect between its invoke
//     and its completion, any time after its invoke when that is unknown. So sold_out is
//     legal only if no unit was left at some moment between the request and its answer,
//     whatever came back meanwhile; and a buyer whose reservation ended may buy again.
//   - Its buyers' unknown requests are resolved with sale.Reservations: a 201 names its order
//     (Purchase.Order; one that does not stands for its buyer's oldest order no 201 named);
//     each order no 201 named is taken by one unknown request of its buyer, the earliest sent that none took
//     yet, the oldest order first (so that each take may happen no earlier than the order
//     it stands for: the k-th order's request is one of k requests sent before it was
//     written), and no later than when it was surely written (sale.Written), if known; the
//     other unknown requests did nothing. An order with no request left to take it (none
//     sent before it was written) is untrue, as above; so is a 201 naming no order when its
//     buyer has none left that another 201 does not stand for.
//
// The counts and shortcuts below assume that no unit comes back: they leave the products
// of sale.Reservations to porcupine alone, which is cheap there (few purchases in flight),
// but for one count: an order whose unit came back twice.
//
// Before porcupine searches, counts look for what they can prove illegal, and say it in
// Result.Reasons: more units taken than stock, a buyer who bought twice, sold_out to a buyer
// with an order, sold_out answered before enough purchases to empty the stock were even
// sent, already_purchased before any purchase of the buyer was sent. porcupine would have
// to try every order of the concurrent purchases to prove these (exponential time with a
// hundred in flight); when a count found one, its search runs at most 2 seconds, for the
// page.
//
// The sold_out and already_purchased answers that are legal in every legal order of the rest
// (see settle: a sold_out answered once enough purchases to empty the stock had been sent)
// are decided without the search (Result.Settled): they are most of a big sale, and
// porcupine's memory grows with the square of the operations it orders (see MaxSearch).
//
// timeout and dir are as for CheckLocks. The error is for a malformed history (an unknown
// outcome, a product without stock, or without orders when sale.Orders has other products',
// a completion before its invoke) or a visualization that could not be written.
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
