//go:build linux

package chaos_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/testenv"
)

// history is the sale's history of purchases (its buys and retries) and what the checker
// needs besides, read from PostgreSQL once drained (testenv.ReservationSale): each buyer's
// orders, each ended reservation's return, each bounded by what the monitor's watch saw
// (the order written, the order ended) and by the first answer to a cancel that said the
// order was cancelled; for redis and queue by the gate's own record, gate_returned_at.
func (s *resvSale) history(t *testing.T, ops []resvOp) ([]history.Purchase, history.Sale) {
	t.Helper()
	cancelled := map[int64]time.Time{} // order -> the first answer saying it was cancelled
	var purchases []history.Purchase
	for _, op := range ops {
		switch {
		case op.kind == "cancel" && op.status == http.StatusOK:
			if at, ok := cancelled[op.order]; !ok || op.done.Before(at) {
				cancelled[op.order] = op.done
			}
		case op.kind == "buy" || op.kind == "retry":
			p := history.Purchase{Product: s.id, User: op.user, Invoke: op.sent, Outcome: history.PurchaseOutcome(op.status, op.code),
				Status: op.status, Code: op.code, Order: op.order, Process: op.target}
			if op.status != 0 {
				p.Complete = op.done
			}
			purchases = append(purchases, p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sale, err := testenv.ReservationSale(ctx, s.db, s.id, s.strategy == "redis" || s.strategy == "queue", s.watch, cancelled)
	if err != nil {
		t.Fatal(err)
	}
	return purchases, sale
}

// checkHistory checks the sale's history against the stock model with returns
// (history.CheckPurchases): some order of the purchases and returns, each placed between
// its invoke and its completion, explains every answer. In particular a sold_out is legal
// only if no unit was left at some moment of its request, whatever came back meanwhile.
func (s *resvSale) checkHistory(t *testing.T, ops []resvOp) {
	t.Helper()
	purchases, sale := s.history(t, ops)
	res, err := checkPurchases(t, purchases, sale, "")
	switch {
	case err != nil:
		t.Errorf("%s: history check: %v", s.strategy, err)
	case !res.OK():
		t.Errorf("%s: the history of %d purchases and %d returns is %s; porcupine's page: %s",
			s.strategy, len(purchases), len(sale.Returns), res.Verdict, res.Visualization)
	}
	known := 0
	for _, r := range sale.Returns {
		if !r.Complete.IsZero() {
			known++
		}
	}
	t.Logf("%s: history of %d purchases and %d returns (%d with a known completion): %s",
		s.strategy, len(purchases), len(sale.Returns), known, res)
}

// historyControls are the history check's negative controls on the drained sale, each on a
// copy of its history: the checker must find illegal
//   - the history with its returns left out (the buyers whose reservation ended bought
//     again, and more units were sold than the stock: no order explains it without them);
//   - a return doubled (a unit given back twice), of a buyer who did not buy again;
//   - a sold_out answered before any purchase was sent, when every unit was on sale (what a
//     process answering from a sold-out mark that outlived a return looks like).
func (s *resvSale) historyControls(t *testing.T, ops []resvOp) {
	t.Helper()
	purchases, sale := s.history(t, ops)
	if len(sale.Returns) == 0 || len(purchases) == 0 {
		t.Fatalf("%s: no return or no purchase: the history controls need both", s.strategy)
	}
	first := purchases[0].Invoke
	for _, p := range purchases {
		if p.Invoke.Before(first) {
			first = p.Invoke
		}
	}
	noReturns, twice := sale, sale
	noReturns.Returns = nil
	// The return doubled is of its buyer's last order: no purchase of theirs could take the
	// unit back between the two.
	last := -1
	for i, r := range sale.Returns {
		if mine := sale.Reservations[s.id][r.User]; mine[len(mine)-1] == r.Order {
			last = i
		}
	}
	if last < 0 {
		t.Fatalf("%s: every buyer whose reservation ended bought again: the history controls need one who did not", s.strategy)
	}
	twice.Returns = append(append([]history.Return(nil), sale.Returns...), sale.Returns[last])
	stale := history.Purchase{Product: s.id, User: 1, Invoke: first.Add(-2 * time.Millisecond),
		Complete: first.Add(-time.Millisecond), Outcome: history.Fail, Status: http.StatusConflict, Code: api.CodeSoldOut}
	for _, c := range []struct {
		name      string
		purchases []history.Purchase
		sale      history.Sale
	}{
		{"returns left out", purchases, noReturns},
		{"a unit returned twice", purchases, twice},
		{"sold_out with every unit on sale", append([]history.Purchase{stale}, purchases...), sale},
	} {
		res, err := checkPurchases(t, c.purchases, c.sale, "-control")
		if err != nil || res.Verdict != history.Illegal {
			t.Errorf("%s: history control, %s: %s, %v; want illegal", s.strategy, c.name, res, err)
		} else {
			t.Logf("%s: history control, %s: %s", s.strategy, c.name, res)
		}
	}
}
