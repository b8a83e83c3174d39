package history_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/history"
)

// alreadyNamed is pur for a 409 already_purchased naming order.
func alreadyNamed(user, order int64, invoke, complete int) history.Purchase {
	p := pur(user, 409, already, invoke, complete)
	p.Order = order
	return p
}

// TestCheckPurchasesTruth holds each answer to PostgreSQL's orders, buyer by buyer: the
// negative controls are the untrue histories outside testers found accepted (a false 201
// paired with another buyer's order hidden behind a busy, so that the counts cancel out; a
// sold_out while the only unit was free, its order written behind a busy; a 201 or an
// already_purchased naming an order PostgreSQL does not have), each illegal with a reason
// naming the buyer; the legal variants stay linearizable. orders(users...) numbers the
// orders from 100.
func TestCheckPurchasesTruth(t *testing.T) {
	stock := func(n int) map[int64]int { return map[int64]int{1: n} }
	busy := func(user int64, invoke, complete int) history.Purchase {
		return pur(user, 503, api.CodeBusy, invoke, complete)
	}
	for _, tt := range []struct {
		name string
		ops  []history.Purchase
		sale history.Sale
		want string // the first reason; "" for linearizable
	}{
		{"(a) a false 201 and another buyer's order hidden behind busy",
			[]history.Purchase{pur(1, 201, "", 0, 5), busy(2, 1, 3), pur(3, 409, soldOut, 10, 11)},
			history.Sale{Stock: stock(2), Orders: orders(2)},
			"user 1 was answered 201 (sent 12:00:00.000000), but PostgreSQL has no order of theirs"},
		{"(a) the order hidden behind busy alone",
			[]history.Purchase{busy(2, 1, 3), busy(2, 4, 6)},
			history.Sale{Stock: stock(2), Orders: orders(2)},
			"user 2 has order 100 in PostgreSQL, but every answer of theirs said nothing was written (the first of their 2 requests: 503 busy, sent 12:00:00.001000)"},
		{"(b) sold_out while the only unit was free, its order written behind busy",
			[]history.Purchase{pur(2, 409, soldOut, 0, 1), busy(1, 5, 6)},
			history.Sale{Stock: stock(1), Orders: orders(1)},
			"user 1 has order 100 in PostgreSQL, but every answer of theirs said nothing was written (their one request: 503 busy, sent 12:00:00.005000)"},
		{"(b) sold_out while the only unit was free, its buyer absent from the history",
			[]history.Purchase{pur(2, 409, soldOut, 0, 1)},
			history.Sale{Stock: stock(1), Orders: orders(9)},
			"user 9 has order 100 in PostgreSQL, but no request of theirs is in the history"},
		{"(b) the buyer's only answer sold_out",
			[]history.Purchase{pur(1, 409, soldOut, 0, 1)},
			history.Sale{Stock: stock(1), Orders: orders(1)},
			"user 1 has order 100 in PostgreSQL, but every answer of theirs said nothing was written (their one request: 409 sold_out"},
		{"(c) a 201 naming an order PostgreSQL does not have",
			[]history.Purchase{named(1, 999, 0, 1)},
			history.Sale{Stock: stock(1), Orders: orders(1)},
			"user 1 was answered 201 order 999 (sent 12:00:00.000000), but PostgreSQL's order of theirs is 100, and it has no order 999"},
		{"(c) a 201 naming another buyer's order",
			[]history.Purchase{named(1, 101, 0, 1), pur(2, 0, "", 0, -1)},
			history.Sale{Stock: stock(2), Orders: orders(1, 2)},
			"user 1 was answered 201 order 101 (sent 12:00:00.000000), but PostgreSQL's order of theirs is 100, and order 101 is user 2's"},
		{"(c) a 201 naming an order, its buyer with none",
			[]history.Purchase{named(1, 100, 0, 1)},
			history.Sale{Stock: stock(1), Orders: orders()},
			"user 1 was answered 201 order 100 (sent 12:00:00.000000), but PostgreSQL has no order of theirs, and it has no order 100"},
		{"(c) already_purchased naming an order PostgreSQL does not have",
			[]history.Purchase{named(1, 100, 0, 1), alreadyNamed(1, 999, 2, 3)},
			history.Sale{Stock: stock(1), Orders: orders(1)},
			"user 1 was answered 409 already_purchased order 999 (sent 12:00:00.002000), but PostgreSQL's order of theirs is 100"},
		{"(c) already_purchased to a buyer with no order",
			[]history.Purchase{pur(1, 0, "", 0, -1), alreadyNamed(1, 100, 2, 3)},
			history.Sale{Stock: stock(1), Orders: orders()},
			"user 1 was answered 409 already_purchased order 100 (sent 12:00:00.002000), but PostgreSQL has no order of theirs"},

		{"legal: a 201 and an already_purchased naming the buyer's order",
			[]history.Purchase{named(1, 100, 0, 1), alreadyNamed(1, 100, 2, 3), pur(2, 409, soldOut, 4, 5)},
			history.Sale{Stock: stock(1), Orders: orders(1)}, ""},
		{"legal: a 201 naming no order (a history recorded without)",
			[]history.Purchase{pur(1, 201, "", 0, 1), pur(2, 409, soldOut, 4, 5)},
			history.Sale{Stock: stock(1), Orders: orders(1)}, ""},
		{"legal: busy, then a 201",
			[]history.Purchase{busy(1, 0, 1), busy(1, 2, 3), named(1, 100, 4, 5), pur(2, 409, soldOut, 6, 7)},
			history.Sale{Stock: stock(1), Orders: orders(1)}, ""},
		{"legal: busy, then no answer, resolved to the order",
			[]history.Purchase{busy(1, 0, 1), pur(1, 0, "", 2, -1), pur(2, 409, soldOut, 6, 7), alreadyNamed(1, 100, 8, 9)},
			history.Sale{Stock: stock(1), Orders: orders(1)}, ""},
		{"legal: outcome_unknown and 202, resolved to orders",
			[]history.Purchase{pur(1, 503, api.CodeOutcomeUnknown, 0, 3), pur(2, 202, "", 1, 2), busy(3, 1, 2), pur(3, 409, soldOut, 5, 6)},
			history.Sale{Stock: stock(2), Orders: orders(1, 2)}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			check := func(t *testing.T) {
				res, err := history.CheckPurchases(tt.ops, tt.sale, 10*time.Second, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				t.Log(res)
				if tt.want == "" {
					if !res.OK() {
						t.Fatalf("verdict = %s, want linearizable (%s)", res.Verdict, res)
					}
					return
				}
				if res.Verdict != history.Illegal || res.Search != history.Illegal {
					t.Fatalf("verdict = %s (porcupine's: %s), want illegal: %s", res.Verdict, res.Search, res)
				}
				if len(res.Reasons) == 0 || !strings.HasPrefix(res.Reasons[0], tt.want) {
					t.Fatalf("reasons %q, want the first to begin %q", res.Reasons, tt.want)
				}
			}
			t.Run("counts and search", check)
			t.Run("search only", func(t *testing.T) { history.SearchOnly(t); check(t) })
		})
	}
}

// TestCheckReservationsTruth: a product sold with a payment window is held to its buyers'
// orders in the same way: a 201 naming an order not among its buyer's, a 201 naming none
// beyond its buyer's orders, and an order none of its buyer's requests can have written are
// illegal, each with its reason.
func TestCheckReservationsTruth(t *testing.T) {
	type orders = map[int64][]int64
	for _, tt := range []struct {
		name string
		ops  []history.Purchase
		resv orders
		want string
	}{
		{"a 201 naming another buyer's order", []history.Purchase{named(1, 12, 0, 1), pur(2, 0, "", 0, -1)},
			orders{1: {11}, 2: {12}}, "user 1 was answered 201 order 12 (sent 12:00:00.000000), but PostgreSQL's order of theirs is 11, and order 12 is user 2's"},
		{"a 201 naming no order, its buyer with none", []history.Purchase{pur(1, 201, "", 0, 1)},
			orders{}, "user 1 was answered 201 (sent 12:00:00.000000), but PostgreSQL has no order of theirs"},
		{"an order hidden behind busy, sold_out before it", []history.Purchase{pur(2, 409, soldOut, 0, 1), pur(1, 503, api.CodeBusy, 5, 6)},
			orders{1: {11}}, "user 1 has order 11 in PostgreSQL, but no 201 of theirs named it, and no request of theirs of unknown outcome, older orders served first, was sent before it was written, by 12:00:00.010000 (their one request: 503 busy"},
		{"an order written before its buyer's only request", []history.Purchase{pur(1, 0, "", 20, -1)},
			orders{1: {11}}, "user 1 has order 11 in PostgreSQL, but no 201 of theirs named it, and no request of theirs of unknown outcome, older orders served first, was sent before it was written, by 12:00:00.010000 (their one request: no answer, sent 12:00:00.020000)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sale := history.Sale{Stock: map[int64]int{1: 1}, Reservations: map[int64]map[int64][]int64{1: tt.resv},
				Written: map[int64]time.Time{}}
			if tt.resv[1] != nil {
				sale.Written[11] = at(10)
			}
			res, err := history.CheckPurchases(tt.ops, sale, 10*time.Second, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != history.Illegal || len(res.Reasons) == 0 || !strings.HasPrefix(res.Reasons[0], tt.want) {
				t.Fatalf("%s; reasons %q, want illegal, the first reason beginning %q", res, res.Reasons, tt.want)
			}
		})
	}
}
