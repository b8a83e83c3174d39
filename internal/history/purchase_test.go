package history_test

import (
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/history"
)

// pur is user's purchase of product 1 from invoke to complete (ms; complete < 0: no answer),
// answered status and code.
func pur(user int64, status int, code string, invoke, complete int) history.Purchase {
	p := history.Purchase{Product: 1, User: user, Invoke: at(invoke), Status: status, Code: code,
		Outcome: history.PurchaseOutcome(status, code)}
	if complete >= 0 {
		p.Complete = at(complete)
	}
	return p
}

const (
	soldOut = api.CodeSoldOut
	already = api.CodeAlreadyPurchased
)

func TestCheckPurchases(t *testing.T) {
	stock := func(n int) map[int64]int { return map[int64]int{1: n} }
	for _, tt := range []struct {
		name string
		ops  []history.Purchase
		sale history.Sale
		want history.Verdict
		ops2 int // operations the checker ordered, -1: not checked
	}{
		{"a sale, then a buyer's retry", []history.Purchase{
			pur(1, 201, "", 0, 10), pur(2, 201, "", 5, 15), pur(3, 409, soldOut, 20, 25), pur(1, 409, already, 30, 31),
		}, history.Sale{Stock: stock(2)}, history.Linearizable, 4},
		{"oversold", []history.Purchase{pur(1, 201, "", 0, 10), pur(2, 201, "", 5, 15)},
			history.Sale{Stock: stock(1)}, history.Illegal, 2},
		{"sold_out before the stock could be 0", []history.Purchase{
			pur(1, 201, "", 0, 5), pur(2, 409, soldOut, 10, 12), pur(3, 201, "", 20, 25),
		}, history.Sale{Stock: stock(2)}, history.Illegal, 3},
		{"sold_out while the last unit is being taken", []history.Purchase{
			pur(1, 201, "", 0, 20), pur(2, 409, soldOut, 5, 10),
		}, history.Sale{Stock: stock(1)}, history.Linearizable, 2},
		{"sold_out before the last unit was asked for", []history.Purchase{
			pur(2, 409, soldOut, 0, 5), pur(1, 201, "", 6, 7),
		}, history.Sale{Stock: stock(1)}, history.Illegal, 2},
		{"a buyer with an order told sold_out", []history.Purchase{
			pur(1, 201, "", 0, 5), pur(2, 409, soldOut, 10, 12), pur(1, 409, soldOut, 20, 22),
		}, history.Sale{Stock: stock(1)}, history.Illegal, 3},
		{"already_purchased with no purchase", []history.Purchase{pur(1, 409, already, 0, 1)},
			history.Sale{Stock: stock(1)}, history.Illegal, 1},
		{"already_purchased while its purchase is in flight", []history.Purchase{
			pur(1, 201, "", 0, 10), pur(1, 409, already, 5, 6),
		}, history.Sale{Stock: stock(1)}, history.Linearizable, 2},
		{"one buyer bought twice", []history.Purchase{pur(1, 201, "", 0, 10), pur(1, 201, "", 20, 30)},
			history.Sale{Stock: stock(5)}, history.Illegal, 2},
		{"refusals change nothing", []history.Purchase{
			pur(1, 503, api.CodeBusy, 0, 1), pur(1, 429, api.CodeRateLimited, 2, 3), pur(1, 201, "", 4, 5),
			pur(2, 503, api.CodeUnavailable, 6, 7), pur(2, 409, soldOut, 8, 9),
		}, history.Sale{Stock: stock(1)}, history.Linearizable, 2},

		// unknown outcomes, resolved by PostgreSQL
		{"no answer, then an order in PostgreSQL", []history.Purchase{
			pur(1, 0, "", 0, -1), pur(2, 201, "", 1, 2), pur(3, 409, soldOut, 10, 11), pur(1, 409, already, 20, 21),
		}, history.Sale{Stock: stock(2), Orders: orders(1, 2)}, history.Linearizable, 4},
		{"no answer, an order, and a retry told sold_out", []history.Purchase{
			pur(1, 0, "", 0, -1), pur(2, 201, "", 1, 2), pur(3, 409, soldOut, 10, 11), pur(1, 409, soldOut, 20, 21),
		}, history.Sale{Stock: stock(2), Orders: orders(1, 2)}, history.Illegal, 4},
		{"outcome_unknown and no order: it did nothing", []history.Purchase{
			pur(1, 503, api.CodeOutcomeUnknown, 0, 3), pur(2, 201, "", 1, 2), pur(3, 409, soldOut, 10, 11),
		}, history.Sale{Stock: stock(1), Orders: orders(2)}, history.Linearizable, 2},
		{"an order taken by a request sent after the sale sold out", []history.Purchase{
			pur(2, 201, "", 0, 1), pur(3, 409, soldOut, 2, 3), pur(1, 0, "", 5, -1),
		}, history.Sale{Stock: stock(2), Orders: orders(1, 2)}, history.Illegal, 3},
		{"two unknowns of one buyer, one order: the first took it", []history.Purchase{
			pur(1, 0, "", 0, -1), pur(1, 503, api.CodeOutcomeUnknown, 2, 4), pur(3, 409, soldOut, 5, 6),
		}, history.Sale{Stock: stock(1), Orders: orders(1)}, history.Linearizable, 2},
		{"202 queued and written", []history.Purchase{pur(1, 202, "", 0, 1), pur(2, 409, soldOut, 5, 6)},
			history.Sale{Stock: stock(1), Orders: orders(1)}, history.Linearizable, 2},
		{"an order no request made", []history.Purchase{pur(2, 409, soldOut, 5, 6)},
			history.Sale{Stock: stock(1), Orders: orders(9)}, history.Illegal, 2},
		{"sold_out with a unit nobody took", []history.Purchase{pur(1, 202, "", 0, 1), pur(2, 409, soldOut, 5, 6)},
			history.Sale{Stock: stock(1), Orders: orders()}, history.Illegal, 1},
		{"PostgreSQL has more orders than stock", []history.Purchase{pur(1, 201, "", 0, 1)},
			history.Sale{Stock: stock(1), Orders: orders(1, 2)}, history.Illegal, 2},

		// unknown outcomes without PostgreSQL's word
		{"no answer that did nothing", []history.Purchase{
			pur(1, 0, "", 0, -1), pur(2, 201, "", 1, 2), pur(3, 409, soldOut, 3, 4),
		}, history.Sale{Stock: stock(1)}, history.Linearizable, 3},
		{"no answer that took the last unit", []history.Purchase{pur(1, 0, "", 0, -1), pur(3, 409, soldOut, 3, 4)},
			history.Sale{Stock: stock(1)}, history.Linearizable, 2},
		{"no answer, then already_purchased", []history.Purchase{pur(1, 0, "", 0, -1), pur(1, 409, already, 3, 4)},
			history.Sale{Stock: stock(1)}, history.Linearizable, 2},
		{"no answer sent after sold_out cannot have taken the last unit", []history.Purchase{
			pur(3, 409, soldOut, 0, 1), pur(1, 0, "", 3, -1),
		}, history.Sale{Stock: stock(1)}, history.Illegal, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			check := func(t *testing.T) {
				res, err := history.CheckPurchases(tt.ops, tt.sale, 10*time.Second, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Verdict; got != tt.want {
					t.Fatalf("verdict = %s, want %s (%s)", got, tt.want, res)
				}
				if got, want := res.Ops+res.Settled, tt.ops2; got != want {
					t.Errorf("operations ordered or settled = %d, want %d (%s)", got, want, res)
				}
				if got, want := res.Visualization != "", tt.want != history.Linearizable; got != want {
					t.Errorf("visualization written = %v, want %v (%s)", got, want, res)
				}
				t.Log(res)
			}
			t.Run("counts and search", check)
			t.Run("search only", func(t *testing.T) { history.SearchOnly(t); check(t) })
		})
	}
}

// orders is PostgreSQL's truth for product 1: users has an order each.
func orders(users ...int64) map[int64]map[int64]int64 {
	o := map[int64]int64{}
	for i, u := range users {
		o[u] = int64(100 + i)
	}
	return map[int64]map[int64]int64{1: o}
}

func TestCheckPurchasesPartitionsByProduct(t *testing.T) {
	a, b := pur(1, 201, "", 0, 10), pur(2, 201, "", 0, 10)
	b.Product = 2
	res, err := history.CheckPurchases([]history.Purchase{a, b}, history.Sale{Stock: map[int64]int{1: 1, 2: 1}}, time.Minute, t.TempDir())
	if err != nil || !res.OK() || res.Partitions != 2 {
		t.Fatalf("CheckPurchases = %s, %v; want linearizable in 2 partitions", res, err)
	}
}

func TestCheckPurchasesRefusesMalformed(t *testing.T) {
	sale := history.Sale{Stock: map[int64]int{1: 1}}
	other := pur(1, 201, "", 0, 1)
	other.Product = 2
	noAnswer := pur(1, 201, "", 0, -1)
	for _, op := range []history.Purchase{other, noAnswer, pur(1, 201, "", 5, 1), {Product: 1, User: 1, Outcome: "done", Invoke: t0}} {
		if _, err := history.CheckPurchases([]history.Purchase{op}, sale, time.Second, t.TempDir()); err == nil {
			t.Errorf("CheckPurchases(%+v) = nil error, want one", op)
		}
	}
}

func TestPurchaseOutcome(t *testing.T) {
	for _, tt := range []struct {
		status int
		code   string
		want   string
	}{
		{201, "", history.OK},
		{409, soldOut, history.Fail},
		{409, already, history.Fail},
		{429, api.CodeRateLimited, history.Fail},
		{404, api.CodeProductNotFound, history.Fail},
		{503, api.CodeBusy, history.Fail},
		{503, api.CodeUnavailable, history.Fail},
		{503, api.CodeOutcomeUnknown, history.Unknown},
		{202, "", history.Unknown},
		{500, api.CodeInternal, history.Unknown},
		{0, "", history.Unknown},
	} {
		if got := history.PurchaseOutcome(tt.status, tt.code); got != tt.want {
			t.Errorf("PurchaseOutcome(%d, %q) = %s, want %s", tt.status, tt.code, got, tt.want)
		}
	}
}
