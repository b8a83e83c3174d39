package history

import (
	"cmp"
	"maps"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/seckill/seckill/internal/api"
)

// resolve gives each purchase of a valid history its effect on the model (see
// CheckPurchases), its call and return on porcupine's clock, and adds a take for each order
// in sale.Orders that no request made. With sale.Orders, it marks the answers those orders
// contradict, and those takes, untrue (truth.go). It returns the purchases that can change
// or read the model, and how many were left out.
func resolve(ops []Purchase, sale Sale) (buys []*buy, dropped int) {
	type buyer struct{ product, user int64 }
	first := map[buyer]int{} // the buyer's first unknown request that took its unit
	bought := map[buyer]bool{}
	asked := map[buyer][]int{} // with sale.Orders: the buyer's requests
	start := time.Unix(0, 0)   // the history's first invoke
	for i, op := range ops {
		b := buyer{op.Product, op.User}
		switch {
		case op.Outcome == OK:
			bought[b] = true
		case op.Outcome == Unknown && sale.hasOrder(op.Product, op.User):
			if j, ok := first[b]; !ok || op.Invoke.Before(ops[j].Invoke) {
				first[b] = i
			}
		}
		if sale.Orders != nil {
			asked[b] = append(asked[b], i)
		}
		if i == 0 || op.Invoke.Before(start) {
			start = op.Invoke
		}
	}
	var owner map[int64]int64
	if sale.Orders != nil {
		owner = owners(sale)
	}
	for i, op := range ops {
		b := &buy{Purchase: op, stock: sale.Stock[op.Product], slot: -1, call: op.Invoke.UnixNano(), ret: nanos(op.Complete)}
		k := buyer{op.Product, op.User}
		e, told := answered(op)
		switch {
		case told:
			b.effect = e
			if sale.Orders != nil {
				var mine []int64
				if o, ok := sale.Orders[op.Product][op.User]; ok {
					mine = []int64{o}
				}
				contradict(b, mine, owner)
			}
		case op.Outcome == Unknown && sale.Orders == nil:
			b.effect, b.ret = mayTake, never
		case op.Outcome == Unknown && sale.hasOrder(op.Product, op.User) && !bought[k] && first[k] == i:
			b.effect, b.order, b.ret = take, sale.Orders[op.Product][op.User], never
		default: // a refusal; an unknown that did nothing
			dropped++
			continue
		}
		buys = append(buys, b)
	}
	for _, product := range slices.Sorted(maps.Keys(sale.Orders)) {
		orders := sale.Orders[product]
		for _, user := range slices.Sorted(maps.Keys(orders)) {
			k := buyer{product, user}
			if _, ok := first[k]; ok || bought[k] {
				continue
			}
			buys = append(buys, hidden(product, user, orders[user], sale.Stock[product], ops, asked[k], start,
				"every answer of theirs said nothing was written"))
		}
	}
	return buys, dropped
}

// answered is the effect of a purchase its answer decides: a 201 takes a unit, sold_out and
// already_purchased read; false for the rest (refusals, unknown outcomes).
func answered(op Purchase) (effect, bool) {
	switch {
	case op.Outcome == OK:
		return take, true
	case op.Outcome == Fail && op.Code == api.CodeSoldOut:
		return soldOut, true
	case op.Outcome == Fail && op.Code == api.CodeAlreadyPurchased:
		return already, true
	}
	return 0, false
}

// settle leaves out of the search the reads (sold_out, already_purchased) that are legal in every
// legal order of the rest, and returns the rest: a sold_out answered once at least stock takes had
// been sent, an already_purchased once its buyer's take had been sent, when no take is left open.
// docs/testing.md#the-checkers-rules says why that is sound.
func settle(buys []*buy, stock map[int64]int) (search []*buy, settled int) {
	type key struct{ product, user int64 }
	calls := map[int64][]int64{} // product -> the invokes of its takes
	open := map[int64]bool{}     // products with a take of unknown outcome left open
	sent := map[key]int64{}      // buyer -> the invoke of its take
	for _, b := range buys {
		switch b.effect {
		case take:
			calls[b.Product] = append(calls[b.Product], b.call)
			sent[key{b.Product, b.User}] = b.call
		case mayTake:
			open[b.Product] = true
		}
	}
	for _, c := range calls {
		slices.Sort(c)
	}
	for _, b := range buys {
		call, has := sent[key{b.Product, b.User}]
		var legal bool
		switch {
		case b.untrue != "", open[b.Product]: // an untrue answer stays for porcupine to refute
		case b.effect == soldOut && !has:
			n, _ := slices.BinarySearch(calls[b.Product], b.ret)
			legal = n >= stock[b.Product]
		case b.effect == already && has:
			legal = call < b.ret
		}
		if legal {
			settled++
			continue
		}
		search = append(search, b)
	}
	return search, settled
}

// operations turns buys into porcupine's operations: each buyer with more than one
// operation on its product gets a slot in the product's set of buyers (a buyer with one
// cannot be in it before that one), and each operation a lane of its product (its ClientId:
// the visualization's rows), the first free when it is invoked.
func operations(buys []*buy) []porcupine.Operation {
	slices.SortStableFunc(buys, func(a, b *buy) int { return cmp.Compare(a.call, b.call) })
	type key struct{ product, user int64 }
	count := map[key]int{}
	for _, b := range buys {
		count[key{b.Product, b.User}]++
	}
	slots := map[key]int{}
	nslots := map[int64]int{}
	lanes := map[int64][]int64{} // product -> each lane's last return
	history := make([]porcupine.Operation, len(buys))
	for i, b := range buys {
		k := key{b.Product, b.User}
		if count[k] > 1 {
			s, ok := slots[k]
			if !ok {
				s = nslots[b.Product]
				nslots[b.Product]++
				slots[k] = s
			}
			b.slot = s
		}
		ends := lanes[b.Product]
		lane := slices.IndexFunc(ends, func(end int64) bool { return end < b.call })
		if lane < 0 {
			lane = len(ends)
			ends = append(ends, 0)
		}
		ends[lane] = b.ret
		lanes[b.Product] = ends
		history[i] = porcupine.Operation{ClientId: lane, Input: b, Call: b.call, Return: b.ret, Metadata: b}
	}
	for _, b := range buys {
		b.slots = nslots[b.Product]
	}
	return history
}
