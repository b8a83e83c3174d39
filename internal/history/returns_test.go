package history_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/history"
)

// back is the return of user's order of product 1 from invoke to complete (ms; complete < 0:
// not known).
func back(user, order int64, invoke, complete int) history.Return {
	r := history.Return{Product: 1, User: user, Order: order, Invoke: at(invoke)}
	if complete >= 0 {
		r.Complete = at(complete)
	}
	return r
}

// named is pur for a 201 naming order.
func named(user, order int64, invoke, complete int) history.Purchase {
	p := pur(user, 201, "", invoke, complete)
	p.Order = order
	return p
}

// TestCheckReservations holds the stock model to returns: a unit comes back between a
// return's invoke and its completion, its buyer may buy again, and sold_out is legal only
// if no unit was left at some moment of the request. The illegal cases are the failures the
// chaos suite's reservation tests rely on the checker to see.
func TestCheckReservations(t *testing.T) {
	type orders = map[int64][]int64
	for _, tt := range []struct {
		name    string
		ops     []history.Purchase
		resv    orders
		returns []history.Return
		want    history.Verdict
	}{
		{"a unit back, bought by another, then sold out",
			[]history.Purchase{named(1, 11, 0, 1), named(2, 12, 4, 5), pur(3, 409, soldOut, 6, 7)},
			orders{1: {11}, 2: {12}}, []history.Return{back(1, 11, 2, 3)}, history.Linearizable},
		{"sold_out after a unit came back, which nobody took (a stale sold-out mark)",
			[]history.Purchase{named(1, 11, 0, 1), pur(2, 409, soldOut, 4, 5)},
			orders{1: {11}}, []history.Return{back(1, 11, 2, 3)}, history.Illegal},
		{"sold_out while the unit is coming back",
			[]history.Purchase{named(1, 11, 0, 1), pur(2, 409, soldOut, 2, 4)},
			orders{1: {11}}, []history.Return{back(1, 11, 3, 10)}, history.Linearizable},
		{"sold_out after a return of unknown completion",
			[]history.Purchase{named(1, 11, 0, 1), pur(2, 409, soldOut, 50, 51)},
			orders{1: {11}}, []history.Return{back(1, 11, 3, -1)}, history.Linearizable},
		{"a unit resold with no return",
			[]history.Purchase{named(1, 11, 0, 1), named(2, 12, 4, 5)},
			orders{1: {11}, 2: {12}}, nil, history.Illegal},
		{"a unit returned twice",
			[]history.Purchase{named(1, 11, 0, 1), named(2, 12, 8, 9), named(3, 13, 10, 11)},
			orders{1: {11}, 2: {12}, 3: {13}}, []history.Return{back(1, 11, 2, 3), back(1, 11, 4, 5)}, history.Illegal},
		{"a buyer buys again once its reservation ended",
			[]history.Purchase{named(1, 11, 0, 1), pur(1, 409, already, 2, 3), named(1, 12, 6, 7), pur(1, 409, already, 8, 9)},
			orders{1: {11, 12}}, []history.Return{back(1, 11, 4, 5)}, history.Linearizable},
		{"a buyer buys again before its reservation ended",
			[]history.Purchase{named(1, 11, 0, 1), named(1, 12, 2, 3)},
			orders{1: {11, 12}}, []history.Return{back(1, 11, 4, 5)}, history.Illegal},
		{"already_purchased after the reservation ended",
			[]history.Purchase{named(1, 11, 0, 1), pur(1, 409, already, 6, 7)},
			orders{1: {11}}, []history.Return{back(1, 11, 2, 5)}, history.Illegal},
		{"orders no 201 named, taken by the buyer's unknown requests",
			[]history.Purchase{pur(1, 0, "", 0, -1), pur(2, 409, soldOut, 2, 3), pur(1, 0, "", 6, -1),
				pur(2, 409, soldOut, 20, 21)},
			orders{1: {11, 12}}, []history.Return{back(1, 11, 4, 5)}, history.Linearizable},
		{"201s that name no order stand for the buyer's orders, oldest first",
			[]history.Purchase{pur(1, 201, "", 0, 1), pur(2, 409, soldOut, 2, 3), pur(1, 201, "", 6, 7)},
			orders{1: {11, 12}}, []history.Return{back(1, 11, 4, 5)}, history.Linearizable},
		{"an unknown request that did nothing leaves the unit on sale",
			[]history.Purchase{pur(1, 0, "", 0, -1), pur(2, 409, soldOut, 2, 3)},
			orders{}, nil, history.Illegal},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sale := history.Sale{Stock: map[int64]int{1: 1}, Reservations: map[int64]map[int64][]int64{1: tt.resv},
				Returns: tt.returns}
			res, err := history.CheckPurchases(tt.ops, sale, 10*time.Second, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tt.want {
				t.Fatalf("verdict %s, want %s: %s", res.Verdict, tt.want, res)
			}
		})
	}
}

// TestCheckReservationsMalformed: returns that do not fit the reservations are refused.
func TestCheckReservationsMalformed(t *testing.T) {
	ops := []history.Purchase{named(1, 11, 0, 1)}
	for _, tt := range []struct {
		name string
		sale history.Sale
		want string
	}{
		{"a return of an order not reserved", history.Sale{Stock: map[int64]int{1: 1},
			Reservations: map[int64]map[int64][]int64{1: {1: {11}}}, Returns: []history.Return{back(1, 99, 2, 3)}},
			"not among the reservations"},
		{"a return completed before it began", history.Sale{Stock: map[int64]int{1: 1},
			Reservations: map[int64]map[int64][]int64{1: {1: {11}}}, Returns: []history.Return{back(1, 11, 3, 2)}},
			"completes before its invoke"},
		{"a product in Orders and Reservations", history.Sale{Stock: map[int64]int{1: 1},
			Orders: map[int64]map[int64]int64{1: {1: 11}}, Reservations: map[int64]map[int64][]int64{1: {1: {11}}}},
			"both Orders and Reservations"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := history.CheckPurchases(ops, tt.sale, time.Second, ""); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestCheckReservationsWritten: an order's time written bounds the unknown request that
// stands for it: it cannot take a unit that came back only after the order was written.
func TestCheckReservationsWritten(t *testing.T) {
	ops := []history.Purchase{named(1, 11, 0, 1), pur(2, 0, "", 0, -1)}
	sale := history.Sale{Stock: map[int64]int{1: 1}, Reservations: map[int64]map[int64][]int64{1: {1: {11}, 2: {12}}},
		Returns: []history.Return{back(1, 11, 10, 11)}}
	for _, tt := range []struct {
		name    string
		written map[int64]time.Time
		want    history.Verdict
	}{
		{"not known: the take comes after the return", nil, history.Linearizable},
		{"written after the return", map[int64]time.Time{12: at(15)}, history.Linearizable},
		{"written before the unit came back", map[int64]time.Time{12: at(5)}, history.Illegal},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sale.Written = tt.written
			res, err := history.CheckPurchases(ops, sale, 10*time.Second, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tt.want {
				t.Fatalf("verdict %s, want %s: %s", res.Verdict, tt.want, res)
			}
		})
	}
}
