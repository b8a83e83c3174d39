package loadgen

import (
	"slices"
	"strings"
	"testing"
)

// TestCheckBuyers holds each buyer's answers to PostgreSQL's orders: the negative controls
// are the untrue answers a count misses (a false 201 paired with another buyer's order hidden
// behind a busy; a sold_out to the buyer of the order; a 201 or an already_purchased naming
// an order that is not the buyer's; an order no request explains), each named; the legal
// variants pass.
func TestCheckBuyers(t *testing.T) {
	type answer struct {
		user  int64
		o     Outcome
		order int64
	}
	type orders = map[int64][]int64
	for _, tt := range []struct {
		name    string
		answers []answer
		orders  orders
		before  []int64
		want    []string // the problems, in order; nil for none
	}{
		{"a true sale", []answer{{1, Bought, 10}, {2, Bought, 11}, {3, SoldOut, 0}, {1, AlreadyPurchased, 10}, {3, Busy, 0}},
			orders{1: {10}, 2: {11}}, nil, nil},
		{"busy, then a 201", []answer{{1, Busy, 0}, {1, Bought, 10}}, orders{1: {10}}, nil, nil},
		{"busy, then no answer, and an order", []answer{{1, Busy, 0}, {1, TransportError, 0}}, orders{1: {10}}, nil, nil},
		{"outcome_unknown and an order", []answer{{1, OutcomeUnknown, 0}}, orders{1: {10}}, nil, nil},
		{"202 and an order", []answer{{1, Accepted, 0}, {1, Accepted, 0}, {1, AlreadyPurchased, 10}}, orders{1: {10}}, nil, nil},
		{"a 201 that named no order", []answer{{1, Bought, 0}}, orders{1: {10}}, nil, nil},
		{"a reservation ended, bought again", []answer{{1, Bought, 10}, {1, Bought, 12}}, orders{1: {10, 12}}, nil, nil},
		{"an order made before the run", []answer{{1, Bought, 10}}, orders{1: {10}, 7: {3}}, []int64{3}, nil},

		{"a false 201 and an order hidden behind busy", []answer{{1, Bought, 999}, {2, Busy, 0}}, orders{2: {11}}, nil, []string{
			"user 1 was answered 201 (order 999) but has no order in PostgreSQL",
			"user 2 has order 11 in PostgreSQL, but every answer of theirs said nothing was written (busy ×1)"}},
		{"sold_out to the buyer of the order", []answer{{1, SoldOut, 0}, {2, Bought, 11}}, orders{1: {10}, 2: {11}}, nil, []string{
			"user 1 has order 10 in PostgreSQL, but every answer of theirs said nothing was written (sold_out ×1)"}},
		{"a 201 naming another buyer's order", []answer{{1, Bought, 11}, {2, TransportError, 0}}, orders{1: {10}, 2: {11}}, nil, []string{
			"user 1 was answered 201 naming order 11, which is user 2's"}},
		{"already_purchased naming an order PostgreSQL does not have", []answer{{1, Bought, 10}, {1, AlreadyPurchased, 999}},
			orders{1: {10}}, nil, []string{"user 1 was answered already_purchased naming order 999, which is not in PostgreSQL"}},
		{"already_purchased with no order", []answer{{1, AlreadyPurchased, 0}}, orders{}, nil, []string{
			"user 1 was answered already_purchased but has no order in PostgreSQL"}},
		{"a 202 with no order", []answer{{1, Accepted, 0}}, orders{}, nil, []string{"user 1 was answered 202 but has no order in PostgreSQL"}},
		{"an order of a buyer who sent nothing", nil, orders{7: {3}}, nil, []string{"user 7 has order 3 in PostgreSQL but sent no request in the run"}},
		{"a second order behind busy", []answer{{1, Bought, 10}, {1, Busy, 0}}, orders{1: {10, 12}}, nil, []string{
			"user 1 has 1 orders in PostgreSQL that no 201 named ([12]), but only 0 requests that may have written one (bought ×1, busy ×1)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			answers := map[int64]*buyerAnswers{}
			for _, a := range tt.answers {
				if answers[a.user] == nil {
					answers[a.user] = &buyerAnswers{}
				}
				answers[a.user].note(a.o, a.order)
			}
			before := map[int64]bool{}
			for _, o := range tt.before {
				before[o] = true
			}
			got := checkBuyers(answers, tt.orders, before)
			if !slices.Equal(got.Problems, tt.want) || got.Untrue != len(tt.want) {
				t.Fatalf("problems %q (untrue %d), want %q", got.Problems, got.Untrue, tt.want)
			}
			if want := len(tt.answers) > 0; (got.Buyers > 0) != want {
				t.Errorf("buyers %d", got.Buyers)
			}
			if s := got.String(); (tt.want == nil) != strings.Contains(s, "every answer agrees") {
				t.Errorf("String() = %q", s)
			}
		})
	}
}
