package app_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/order"
)

// safeStrategies are the strategies that never oversell; "dlock-fair" is a fair dlock product.
var safeStrategies = []string{"dlock", "dlock-fair", "pessimistic", "optimistic", "redis"}

// checkAudit asserts the invariants from PostgreSQL: orders == sold, stock >= 0, no duplicate
// buyer, nothing oversold, and (redis strategy) the gate agrees.
func checkAudit(t *testing.T, a api.Audit, wantSold int) {
	t.Helper()
	if a.Orders != wantSold || a.Sold != wantSold || a.Stock < 0 || a.Oversold != 0 || a.DuplicateUsers != 0 || !a.Consistent {
		t.Fatalf("audit = %+v (redis %+v), want %d sold, consistent", a, a.Redis, wantSold)
	}
}

func TestNoOversellUnderCrowd(t *testing.T) {
	t.Parallel()
	const stock, buyers = 100, 1000
	first := newStack(t, order.Config{LockWait: 2 * time.Second})
	second := newStackOn(t, first.DB, first.Redis, first.Prefix, order.Config{LockWait: 2 * time.Second})
	stacks := []*stack{first, second} // two API processes sharing PostgreSQL and Redis
	for _, strategy := range safeStrategies {
		t.Run(strategy, func(t *testing.T) { sellToCrowd(t, stacks, strategy, stock, buyers) })
	}
}

// sellToCrowd creates a product of strategy with stock on stacks[0] and sends it buyers
// distinct buyers at once over stacks: every answer must be bought, sold out or busy, the
// stock sold exactly (the rest to later buyers, one at a time), and the audit hold.
func sellToCrowd(t *testing.T, stacks []*stack, strategy string, stock, buyers int) {
	t.Helper()
	p := stacks[0].createProduct(t, stock, strategy, 0)
	res := crowd(t, stacks, p.ID, buyers, func(i int) int64 { return int64(i + 1) })
	if other := buyers - res.get("201 ") - res.get("409 "+api.CodeSoldOut) - res.get("503 "+api.CodeBusy); other != 0 {
		t.Errorf("%d answers were neither bought, sold_out nor busy: %v", other, res.m)
	}
	if got := res.get("201 ") + sellOut(t, stacks, p.ID, int64(buyers)+1); got != stock {
		t.Errorf("bought = %d, want %d; crowd answers %v", got, stock, res.m)
	}
	checkAudit(t, stacks[0].audit(t, p.ID), stock)
}

func TestOneUserBuysOnce(t *testing.T) {
	t.Parallel()
	s := newStack(t, order.Config{LockWait: 2 * time.Second})
	for _, strategy := range safeStrategies {
		t.Run(strategy, func(t *testing.T) {
			p := s.createProduct(t, 10, strategy, 0)
			res := crowd(t, []*stack{s}, p.ID, 50, func(int) int64 { return 42 })
			if got := res.get("201 "); got != 1 {
				t.Errorf("bought = %d, want 1; answers %v", got, res.m)
			}
			// 503 unavailable is a dependency that did not answer in time (a loaded machine:
			// seen once in a full make test), true and harmless: it wrote nothing.
			if other := 50 - res.get("201 ") - res.get("409 "+api.CodeAlreadyPurchased) - res.get("503 "+api.CodeBusy) -
				res.get("503 "+api.CodeUnavailable); other != 0 {
				t.Errorf("unexpected answers: %v", res.m)
			}
			checkAudit(t, s.audit(t, p.ID), 1)
		})
	}
}

// TestNaiveOversells is the negative control: the same harness must see the naive strategy
// oversell, or it could not see anyone else's oversell either.
func TestNaiveOversells(t *testing.T) {
	t.Parallel()
	s := newStack(t, order.Config{})
	p := s.createProduct(t, 10, "naive", 50)
	crowd(t, []*stack{s}, p.ID, 200, func(i int) int64 { return int64(i + 1) })
	a := s.audit(t, p.ID)
	if a.Oversold == 0 || a.Consistent {
		t.Fatalf("naive audit = %+v, want an oversell", a)
	}
	t.Logf("naive: %d orders for %d units (oversold %d, stock left %d)", a.Orders, a.InitialStock, a.Oversold, a.Stock)
}

// TestSellsOutExactlyWithThink widens the read-write window; safe strategies must still hold.
func TestSellsOutExactlyWithThink(t *testing.T) {
	t.Parallel()
	s := newStack(t, order.Config{LockWait: 5 * time.Second})
	for _, strategy := range safeStrategies {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			p := s.createProduct(t, 5, strategy, 5)
			crowd(t, []*stack{s}, p.ID, 40, func(i int) int64 { return int64(i + 1) })
			checkAudit(t, s.audit(t, p.ID), 5)
		})
	}
}

func TestSoldOutFastPathAndProductView(t *testing.T) {
	t.Parallel()
	s := newStack(t, order.Config{})
	p := s.createProduct(t, 1, "dlock", 0)
	if status, _, err := s.purchase(p.ID, 1); err != nil || status != http.StatusCreated {
		t.Fatalf("first purchase = %d %v", status, err)
	}
	for u := int64(2); u < 5; u++ {
		if status, code, _ := s.purchase(p.ID, u); status != http.StatusConflict || code != api.CodeSoldOut {
			t.Fatalf("purchase after sell-out = %d %s, want 409 sold_out", status, code)
		}
	}
	got, err := s.API.Product(context.Background(), p.ID)
	if err != nil {
		t.Fatalf("get product: %v", err)
	}
	if got.Stock != 0 || got.Sold != 1 || got.InitialStock != 1 || got.Strategy != "dlock" {
		t.Fatalf("product = %+v", got)
	}
}

// TestNoOversellUnbatched runs the crowd against the dlock strategy with group commit off
// (one order per lock), over two API processes.
func TestNoOversellUnbatched(t *testing.T) {
	t.Parallel()
	cfg := order.Config{LockWait: 2 * time.Second, BatchMax: 1}
	first := newStack(t, cfg)
	second := newStackOn(t, first.DB, first.Redis, first.Prefix, cfg)
	p := first.createProduct(t, 50, "dlock", 0)
	stacks := []*stack{first, second}
	res := crowd(t, stacks, p.ID, 500, func(i int) int64 { return int64(i + 1) })
	if got := res.get("201 ") + sellOut(t, stacks, p.ID, 501); got != 50 {
		t.Errorf("bought = %d, want 50; crowd answers %v", got, res.m)
	}
	checkAudit(t, first.audit(t, p.ID), 50)
}

// sellOut buys product id with new users from firstUser on, one at a time over the stacks in
// turn, until it is sold out, and returns how many it bought. A crowd of one-order-per-lock
// buyers on a loaded machine may leave units unsold (503 busy: the lock wait ran out), which
// says nothing about safety; the sale must still end exactly at the stock.
func sellOut(t *testing.T, stacks []*stack, id, firstUser int64) int {
	t.Helper()
	bought := 0
	for u := firstUser; u < firstUser+10_000; u++ {
		status, code, err := stacks[int(u)%len(stacks)].purchase(id, u)
		switch {
		case err != nil:
			t.Fatalf("purchase: %v", err)
		case status == http.StatusCreated:
			bought++
		case status == http.StatusConflict && code == api.CodeSoldOut:
			return bought
		case status != http.StatusServiceUnavailable || code != api.CodeBusy:
			t.Fatalf("purchase by %d = %d %s", u, status, code)
		}
	}
	t.Fatal("not sold out after 10,000 more buyers")
	return 0
}
