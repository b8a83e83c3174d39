package history

import (
	"fmt"
	"time"
)

// Restock is units a merchant added to a product's stock, once, by one restock request
// retried with the same idempotency key until answered.
type Restock struct {
	Product  int64     `json:"product"`
	Units    int       `json:"units"`
	Invoke   time.Time `json:"invoke"`   // the first attempt was sent: the units were not on sale before
	Complete time.Time `json:"complete"` // an attempt was answered: the units were on sale by then
}

// validRestocks checks sale's restocks: each of a product with a stock, of at least one unit,
// with both times in order.
func validRestocks(sale Sale) error {
	for i, r := range sale.Restocks {
		switch {
		case r.Units < 1:
			return fmt.Errorf("restock %d of product %d adds %d units", i, r.Product, r.Units)
		case r.Invoke.IsZero() || r.Complete.IsZero():
			return fmt.Errorf("restock %d of product %d needs both an invoke and a completion time", i, r.Product)
		case r.Complete.Before(r.Invoke):
			return fmt.Errorf("restock %d of product %d completes before its invoke", i, r.Product)
		}
		if _, ok := sale.Stock[r.Product]; !ok {
			return fmt.Errorf("restock %d: product %d has no stock given", i, r.Product)
		}
	}
	return nil
}

// restocked is each product's stock before the sale plus its restocks: every unit it ever had.
func restocked(sale Sale) map[int64]int {
	if len(sale.Restocks) == 0 {
		return sale.Stock
	}
	all := make(map[int64]int, len(sale.Stock))
	for p, n := range sale.Stock {
		all[p] = n
	}
	for _, r := range sale.Restocks {
		all[r.Product] += r.Units
	}
	return all
}

// apart splits buys into those of products never restocked and those of products
// restocked: settle cannot judge the latter's sold_out by counting (a restock makes a later
// sold_out need more takes), so they all go to the search.
func apart(buys []*buy, sale Sale) (plain, again []*buy) {
	if len(sale.Restocks) == 0 {
		return buys, nil
	}
	restockedProduct := map[int64]bool{}
	for _, r := range sale.Restocks {
		restockedProduct[r.Product] = true
	}
	for _, b := range buys {
		if restockedProduct[b.Product] {
			again = append(again, b)
		} else {
			plain = append(plain, b)
		}
	}
	return plain, again
}

// restocks are sale's restocks as operations of the model: each adds its units at some
// instant between its invoke and its completion.
func restocks(sale Sale) []*buy {
	var ops []*buy
	for _, r := range sale.Restocks {
		ops = append(ops, &buy{
			Purchase: Purchase{Product: r.Product, Invoke: r.Invoke, Complete: r.Complete, Outcome: OK},
			effect:   restock, units: r.Units, stock: sale.Stock[r.Product], slot: -1,
			call: r.Invoke.UnixNano(), ret: r.Complete.UnixNano(),
		})
	}
	return ops
}
