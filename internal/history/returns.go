package history

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Return is a unit an ended reservation gave back, between Invoke and Complete.
type Return struct {
	Product int64 `json:"product"`
	User    int64 `json:"user"`  // the reservation's buyer
	Order   int64 `json:"order"` // the reservation's order
	// Invoke is the order's ended_at: the unit was not back before.
	Invoke time.Time `json:"invoke"`
	// Complete is a time by which the unit was surely back; zero if unknown.
	Complete time.Time `json:"complete,omitzero"`
}

// validReturns checks sale's returns and reservations (see Sale).
func validReturns(sale Sale) error {
	orderOf := map[int64][2]int64{} // order -> product, user
	for product, users := range sale.Reservations {
		if _, ok := sale.Stock[product]; !ok {
			return fmt.Errorf("product %d has reservations but no stock given", product)
		}
		if _, ok := sale.Orders[product]; ok {
			return fmt.Errorf("product %d has both Orders and Reservations", product)
		}
		for user, orders := range users {
			for _, o := range orders {
				orderOf[o] = [2]int64{product, user}
			}
		}
	}
	for i, r := range sale.Returns {
		switch {
		case orderOf[r.Order] != [2]int64{r.Product, r.User}:
			return fmt.Errorf("return %d: order %d is not among the reservations of user %d, product %d", i, r.Order, r.User, r.Product)
		case r.Invoke.IsZero():
			return fmt.Errorf("return %d (order %d) has no invoke time", i, r.Order)
		case !r.Complete.IsZero() && r.Complete.Before(r.Invoke):
			return fmt.Errorf("return %d (order %d) completes before its invoke", i, r.Order)
		}
	}
	for o := range sale.Written {
		if _, ok := orderOf[o]; !ok {
			return fmt.Errorf("order %d has a time written but is not among the reservations", o)
		}
	}
	return nil
}

// resolveReservations is resolve for the purchases of the products of sale.Reservations (see
// CheckPurchases), with a giveBack for each of sale.Returns; it marks the answers the
// reservations contradict, and the orders no request can have made, untrue (truth.go).
func resolveReservations(ops []Purchase, sale Sale) (buys []*buy, dropped int) {
	type buyer struct{ product, user int64 }
	owner := owners(sale)
	start := map[int64]time.Time{} // product -> the first invoke of its purchases
	named := map[int64]bool{}      // orders a 201 of their buyer named
	blind := map[buyer][]int{}     // 201s that named no order (a history recorded without)
	unknown := map[buyer][]int{}   // the buyer's requests of unknown outcome
	asked := map[buyer][]int{}     // all the buyer's requests
	for i, op := range ops {
		k := buyer{op.Product, op.User}
		if first, ok := start[op.Product]; !ok || op.Invoke.Before(first) {
			start[op.Product] = op.Invoke
		}
		asked[k] = append(asked[k], i)
		switch {
		case op.Outcome == OK && op.Order != 0:
			if u, ok := owner[op.Order]; ok && u == op.User {
				named[op.Order] = true
			}
		case op.Outcome == OK:
			blind[k] = append(blind[k], i)
		case op.Outcome == Unknown:
			unknown[k] = append(unknown[k], i)
		}
	}
	byInvoke := func(a, b int) int { return ops[a].Invoke.Compare(ops[b].Invoke) }
	took := map[int]int64{}  // an unknown request -> the order it took
	stands := map[int]bool{} // the 201s that named no order and stand for one
	for _, product := range slices.Sorted(maps.Keys(sale.Reservations)) {
		users := sale.Reservations[product]
		for _, user := range slices.Sorted(maps.Keys(users)) {
			k := buyer{product, user}
			mine, blinds := unknown[k], blind[k]
			slices.SortStableFunc(mine, byInvoke)
			slices.SortStableFunc(blinds, byInvoke)
			for _, o := range users[user] {
				switch {
				case named[o]:
				case len(blinds) > 0: // taken by a 201 that did not say which: the oldest first
					stands[blinds[0]], blinds = true, blinds[1:]
				case len(mine) > 0 && (sale.Written[o].IsZero() || !ops[mine[0]].Invoke.After(sale.Written[o])):
					took[mine[0]], mine = o, mine[1:]
				default:
					from, ok := start[product]
					if !ok {
						from = time.Unix(0, 0)
					}
					why := "no 201 of theirs named it, and no request of theirs of unknown outcome, older orders served first, was sent before it was written"
					if w := sale.Written[o]; !w.IsZero() {
						why += ", by " + stamp(w)
					}
					buys = append(buys, hidden(product, user, o, sale.Stock[product], ops, asked[k], from, why))
				}
			}
		}
	}
	for i, op := range ops {
		b := &buy{Purchase: op, stock: sale.Stock[op.Product], slot: -1, call: op.Invoke.UnixNano(), ret: nanos(op.Complete)}
		order, ok := took[i]
		e, told := answered(op)
		switch {
		case told:
			b.effect = e
			contradict(b, sale.Reservations[op.Product][op.User], owner)
			if b.untrue == "" && op.Outcome == OK && op.Order == 0 && !stands[i] {
				b.effect, b.untrue = none, "PostgreSQL has no order of theirs left that no other 201 stands for"
			}
		case op.Outcome == Unknown && ok:
			b.effect, b.order, b.ret = take, order, nanos(sale.Written[order])
		default: // a refusal; an unknown request that did nothing
			dropped++
			continue
		}
		buys = append(buys, b)
	}
	for _, r := range sale.Returns {
		outcome := OK
		if r.Complete.IsZero() {
			outcome = Unknown
		}
		buys = append(buys, &buy{
			Purchase: Purchase{Product: r.Product, User: r.User, Invoke: r.Invoke, Complete: r.Complete, Outcome: outcome},
			effect:   giveBack, stock: sale.Stock[r.Product], slot: -1, order: r.Order,
			call: r.Invoke.UnixNano(), ret: nanos(r.Complete),
		})
	}
	slices.SortStableFunc(buys, func(a, b *buy) int { return cmp.Compare(a.call, b.call) })
	return buys, dropped
}

// returnedTwice names the orders with more than one return: each reservation ends once, so
// no order explains a second (the search could take exponential time to prove it).
func returnedTwice(returns []Return) []string {
	var reasons []string
	seen := map[int64]bool{}
	for _, r := range returns {
		if seen[r.Order] && len(reasons) < maxReasons {
			reasons = append(reasons, fmt.Sprintf("order %d of user %d, product %d: its unit came back twice", r.Order, r.User, r.Product))
		}
		seen[r.Order] = true
	}
	return reasons
}
