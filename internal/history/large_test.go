package history_test

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/history"
)

// syntheticSale is a legal history of a sale of stock units to n buyers, as a server that
// serializes purchases would answer it: one purchase takes effect every 50 µs, each request
// sent up to 3 ms before and answered up to 3 ms after (about 120 in flight at once). One in
// a hundred gets no answer (PostgreSQL's orders say which of those bought), and every tenth
// buyer retries after the sale. Its third result is the history with one more 201 than
// stock, a sold_out near the sell-out turned into a 201.
func syntheticSale(n, stock int) ([]history.Purchase, history.Sale, []history.Purchase) {
	rng := rand.New(rand.NewPCG(1, 2))
	start := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	jitter := func() time.Duration { return time.Duration(rng.Int64N(int64(3 * time.Millisecond))) }
	orders := map[int64]int64{}
	var ops []history.Purchase
	oversold := -1
	for i := range n {
		user := int64(i + 1)
		at := start.Add(time.Duration(i) * 50 * time.Microsecond)
		p := history.Purchase{Product: 1, User: user, Invoke: at.Add(-jitter()), Complete: at.Add(jitter())}
		if len(orders) < stock {
			orders[user] = int64(len(orders) + 1)
			p.Status, p.Order = 201, orders[user]
		} else {
			p.Status, p.Code = 409, soldOut
			if oversold < 0 && i > n/100 {
				oversold = len(ops)
			}
		}
		if rng.IntN(100) == 0 || i == 50 { // one that bought among them
			p.Status, p.Code, p.Order, p.Complete = 0, "", 0, time.Time{}
		}
		p.Outcome = history.PurchaseOutcome(p.Status, p.Code)
		ops = append(ops, p)
	}
	end := start.Add(time.Duration(n)*50*time.Microsecond + 10*time.Millisecond)
	for i := 0; i < n; i += 10 {
		user := int64(i + 1)
		p := history.Purchase{Product: 1, User: user, Invoke: end, Complete: end.Add(time.Millisecond), Status: 409, Code: soldOut}
		if orders[user] != 0 {
			p.Code, p.Order = already, orders[user]
		}
		p.Outcome = history.PurchaseOutcome(p.Status, p.Code)
		ops = append(ops, p)
		end = end.Add(100 * time.Microsecond)
	}
	bad := append([]history.Purchase(nil), ops...)
	bad[oversold].Status, bad[oversold].Code, bad[oversold].Outcome = 201, "", history.OK
	return ops, history.Sale{Stock: map[int64]int{1: stock}, Orders: map[int64]map[int64]int64{1: orders}}, bad
}

// TestCheckPurchasesLarge checks a legal sale of 20000 buyers and 100 units (22000 requests,
// retries included) and logs how long it took: with PostgreSQL's orders (the sold_out
// answers settle without the search), and without them (an unknown outcome left open, so
// porcupine orders every request).
func TestCheckPurchasesLarge(t *testing.T) {
	ops, sale, _ := syntheticSale(20000, 100)
	for _, tt := range []struct {
		name string
		sale history.Sale
	}{
		{"with PostgreSQL's orders", sale},
		{"unknowns left open", history.Sale{Stock: sale.Stock}},
	} {
		res, err := history.CheckPurchases(ops, tt.sale, time.Minute, t.TempDir())
		if err != nil || !res.OK() {
			t.Fatalf("%s: CheckPurchases = %s, %v; want linearizable", tt.name, res, err)
		}
		t.Logf("%s: %s", tt.name, res)
	}
}

// TestCheckPurchasesLargeIllegal: in the same sale, one 201 too many (an order beyond the
// stock in PostgreSQL), or one buyer told sold_out early, is proved illegal by the counts at
// once; porcupine alone would search for minutes (2^100 orders of the units' buyers). The
// same 201 with no order in PostgreSQL is named as untrue.
func TestCheckPurchasesLargeIllegal(t *testing.T) {
	ops, sale, oversold := syntheticSale(20000, 100)
	i := slices.IndexFunc(oversold, func(p history.Purchase) bool { return p.Outcome == history.OK && sale.Orders[1][p.User] == 0 })
	extra := maps.Clone(sale.Orders[1])
	extra[oversold[i].User] = 100_000
	early := slices.Clone(ops)
	// A buyer who does not retry (every tenth does, and would be told already_purchased).
	j := slices.IndexFunc(early, func(p history.Purchase) bool { return p.Status == 201 && p.User > 10 && p.User%10 != 1 })
	early[j].Status, early[j].Code, early[j].Order, early[j].Outcome = 409, soldOut, 0, history.Fail
	orders := maps.Clone(sale.Orders[1])
	delete(orders, early[j].User)
	for _, tt := range []struct {
		name string
		ops  []history.Purchase
		sale history.Sale
		want string
	}{
		{"one 201 too many", oversold, history.Sale{Stock: sale.Stock, Orders: map[int64]map[int64]int64{1: extra}},
			"product 1: 101 purchases took a unit"},
		{"one 201 with no order", oversold, sale,
			fmt.Sprintf("user %d was answered 201 (sent %s), but PostgreSQL has no order of theirs", oversold[i].User, oversold[i].Invoke.Format("15:04:05.000000"))},
		{"sold_out told early", early, history.Sale{Stock: sale.Stock, Orders: map[int64]map[int64]int64{1: orders}},
			fmt.Sprintf("user %d was answered sold_out", early[j].User)},
	} {
		res, err := history.CheckPurchases(tt.ops, tt.sale, time.Second, t.TempDir())
		if err != nil || res.Verdict != history.Illegal || len(res.Reasons) == 0 || !strings.HasPrefix(res.Reasons[0], tt.want) {
			t.Fatalf("%s: CheckPurchases = %s, %v; want illegal: %s", tt.name, res, err, tt.want)
		}
		t.Logf("%s: %s", tt.name, res)
	}
}

func BenchmarkCheckPurchases(b *testing.B) {
	ops, sale, _ := syntheticSale(20000, 100)
	for b.Loop() {
		if res, err := history.CheckPurchases(ops, sale, time.Minute, b.TempDir()); err != nil || !res.OK() {
			b.Fatalf("CheckPurchases = %s, %v", res, err)
		}
	}
}

// BenchmarkCheckPurchasesSearchOnly is the same check with porcupine ordering every request:
// the counts and the settled reads turned off.
func BenchmarkCheckPurchasesSearchOnly(b *testing.B) {
	history.SearchOnly(b)
	BenchmarkCheckPurchases(b)
}
