package history

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// owners maps each order of sale (Orders and Reservations) to its buyer.
func owners(sale Sale) map[int64]int64 {
	owner := map[int64]int64{}
	for _, users := range sale.Orders {
		for user, order := range users {
			owner[order] = user
		}
	}
	for _, users := range sale.Reservations {
		for user, orders := range users {
			for _, o := range orders {
				owner[o] = user
			}
		}
	}
	return owner
}

// contradict marks b, a 201 or an already_purchased, untrue when PostgreSQL's orders say
// otherwise: its buyer has none of mine (their orders), or it names an order not among them.
// A 201 with no order of its buyer takes nothing.
func contradict(b *buy, mine []int64, owner map[int64]int64) {
	switch {
	case b.Outcome != OK && b.effect != already:
	case len(mine) == 0:
		b.untrue = "PostgreSQL has no order of theirs" + whose(b.Order, b.User, owner)
		if b.effect == take {
			b.effect = none
		}
	case b.Order != 0 && !slices.Contains(mine, b.Order):
		b.untrue = fmt.Sprintf("PostgreSQL's orders of theirs are %v", mine) + whose(b.Order, b.User, owner)
		if len(mine) == 1 {
			b.untrue = fmt.Sprintf("PostgreSQL's order of theirs is %d", mine[0]) + whose(b.Order, b.User, owner)
		}
	}
}

// whose says, for an answer of user naming order, whose order it is in PostgreSQL when it is
// not theirs.
func whose(order, user int64, owner map[int64]int64) string {
	switch o, ok := owner[order]; {
	case order == 0 || ok && o == user:
		return ""
	case ok:
		return fmt.Sprintf(", and order %d is user %d's", order, o)
	}
	return fmt.Sprintf(", and it has no order %d", order)
}

// hidden is the take of order, user's order of product in PostgreSQL, that none of their
// requests (ops[i] for i in asked) can have made. It is untrue: every request of the
// history is in it, so one of them wrote the order and its answer was untrue, or none did.
// It runs from their first request to their last answer (no completion if one has none),
// from start when they sent none; why says why none can have made it, and the reason adds
// their first request.
func hidden(product, user, order int64, stock int, ops []Purchase, asked []int, start time.Time, why string) *buy {
	b := &buy{Purchase: Purchase{Product: product, User: user, Invoke: start, Outcome: Unknown},
		effect: take, stock: stock, slot: -1, order: order, unseen: true, call: start.UnixNano(), ret: never}
	if len(asked) == 0 {
		b.untrue = "no request of theirs is in the history"
		return b
	}
	first := ops[asked[0]]
	var last int64
	for _, i := range asked {
		op := ops[i]
		if op.Invoke.Before(first.Invoke) {
			first = op
		}
		last = max(last, nanos(op.Complete))
	}
	b.Invoke, b.call, b.ret = first.Invoke, first.Invoke.UnixNano(), last
	said := (&buy{Purchase: first, effect: none}).answer() + ", sent " + stamp(first.Invoke)
	if len(asked) == 1 {
		b.untrue = fmt.Sprintf("%s (their one request: %s)", why, said)
	} else {
		b.untrue = fmt.Sprintf("%s (the first of their %d requests: %s)", why, len(asked), said)
	}
	return b
}

// untruths says, in the order of the history, why each untrue buy is untrue: the first
// maxReasons.
func untruths(buys []*buy) []string {
	var untrue []*buy
	for _, b := range buys {
		if b.untrue != "" {
			untrue = append(untrue, b)
		}
	}
	slices.SortStableFunc(untrue, func(a, b *buy) int { // an answer before an order at the same time
		return cmp.Or(cmp.Compare(a.call, b.call), cmp.Compare(btoi(a.unseen), btoi(b.unseen)))
	})
	var reasons []string
	for _, b := range untrue[:min(len(untrue), maxReasons)] {
		if b.unseen {
			reasons = append(reasons, fmt.Sprintf("user %d has order %d in PostgreSQL, but %s", b.User, b.order, b.untrue))
			continue
		}
		reasons = append(reasons, fmt.Sprintf("user %d was answered %s (sent %s), but %s", b.User, b.answer(), stamp(b.Invoke), b.untrue))
	}
	return reasons
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
