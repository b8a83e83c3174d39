package history

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// maxReasons bounds the reasons a result lists.
const maxReasons = 8

// refute looks for violations of the stock model that a count proves, before porcupine
// searches: each is a proof that no legal order exists. porcupine must try every order of
// a product's concurrent purchases to prove what a count shows at once (one 201 too many
// among a hundred in flight is 2^100 orders); it decides the rest, and confirms these where
// it can in time. Each buy's effect is final here (see CheckPurchases); the returned
// reasons follow the order of buys, counts first.
func refute(buys []*buy, stock map[int64]int) []string {
	type key struct{ product, user int64 }
	took := map[int64]int{}      // product -> purchases that took a unit
	calls := map[int64][]int64{} // product -> invokes of the purchases that may have taken one
	mine := map[key][]int64{}    // buyer -> invokes of its purchases that may have taken one
	bought := map[key]*buy{}     // buyer -> its purchase that took a unit
	var reasons []string
	add := func(format string, args ...any) {
		if len(reasons) < maxReasons {
			reasons = append(reasons, fmt.Sprintf(format, args...))
		}
	}
	for _, b := range buys {
		if b.effect != take && b.effect != mayTake {
			continue
		}
		k := key{b.Product, b.User}
		calls[b.Product] = append(calls[b.Product], b.Invoke.UnixNano())
		mine[k] = append(mine[k], b.Invoke.UnixNano())
		if b.effect == take {
			took[b.Product]++
			if first := bought[k]; first != nil {
				add("user %d bought product %d twice: %s (sent %s), and %s (sent %s)",
					b.User, b.Product, first.answer(), stamp(first.Invoke), b.answer(), stamp(b.Invoke))
			}
			bought[k] = b
		}
	}
	for _, product := range slices.Sorted(maps.Keys(took)) {
		if n := took[product]; n > stock[product] {
			add("product %d: %d purchases took a unit (answered 201, or with an order in PostgreSQL), its stock was %d", product, n, stock[product])
		}
	}
	for _, v := range calls {
		slices.Sort(v)
	}
	for _, b := range buys {
		k := key{b.Product, b.User}
		switch {
		case b.untrue != "": // untruths names it
		case b.effect == soldOut && bought[k] != nil:
			add("user %d has an order of product %d (%s, sent %s) but was answered sold_out at %s",
				b.User, b.Product, bought[k].answer(), stamp(bought[k].Invoke), stamp(b.Complete))
		case b.effect == soldOut:
			// sold_out needs every unit taken by its answer: by purchases sent before it.
			if n, _ := slices.BinarySearch(calls[b.Product], b.Complete.UnixNano()+1); n < b.stock {
				add("user %d was answered sold_out at %s, when at most %d of product %d's %d units could have been taken",
					b.User, stamp(b.Complete), n, b.Product, b.stock)
			}
		case b.effect == already && !slices.ContainsFunc(mine[k], func(c int64) bool { return c <= b.Complete.UnixNano() }):
			add("user %d was answered already_purchased at %s, before any purchase of theirs could have bought product %d",
				b.User, stamp(b.Complete), b.Product)
		}
	}
	return reasons
}

// stamp is t as the reasons print it.
func stamp(t time.Time) string { return t.Format("15:04:05.000000") }
