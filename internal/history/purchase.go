package history

import (
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/seckill/seckill/internal/api"
)

// Purchase is one buyer's purchase request and its outcome.
type Purchase struct {
	Product int64     `json:"product"`
	User    int64     `json:"user"`
	Invoke  time.Time `json:"invoke"` // when the request was sent
	// Complete is when the answer was read; zero for none.
	Complete time.Time `json:"complete,omitzero"`
	// Outcome is OK, Fail or Unknown, as PurchaseOutcome maps the answer.
	Outcome string `json:"outcome"`
	Status  int    `json:"status,omitempty"`  // the HTTP status, 0 for no answer
	Code    string `json:"code,omitempty"`    // the problem's code, if any
	Order   int64  `json:"order,omitempty"`   // the order a 201 or already_purchased named
	Process string `json:"process,omitempty"` // the API process asked, if known
}

// PurchaseOutcome maps an answer (status 0: none) to OK (201), Fail (wrote nothing) or Unknown.
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
	// Orders is each product's settled buyers (user → order id); nil leaves unknowns open.
	Orders map[int64]map[int64]int64
	// Reservations is Orders for products with a payment window: each buyer's order ids,
	// oldest first.
	Reservations map[int64]map[int64][]int64
	// Returns are the units Reservations' ended orders gave back.
	Returns []Return
	// Written is, per order of Reservations, a time by which it was surely written.
	Written map[int64]time.Time
	// Restocks are the units merchants added during the sale.
	Restocks []Restock
}

// CheckPurchases checks purchases against a stock model per product; timeout, dir and errors
// are as for CheckLocks (docs/testing.md#the-checkers-rules).
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
	if err := validRestocks(sale); err != nil {
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
	reasons := append(untruths(slices.Concat(buys, back)), counts(buys, restocked(sale))...)
	reasons = append(reasons, returnedTwice(sale.Returns)...)
	unsettled, again := apart(buys, sale)
	search, settled := settling(unsettled, sale.Stock)
	search, dropped = slices.Concat(search, again, back, restocks(sale)), dropped+more
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
