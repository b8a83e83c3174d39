package history

import (
	"fmt"
	"strconv"

	"github.com/anishathalye/porcupine"
)

// effect is what a purchase does to the model, by its outcome (see CheckPurchases).
type effect int8

const (
	take     effect = iota // takes a unit: one is left, the buyer has none
	mayTake                // an unknown outcome: takes a unit if it can, else nothing
	soldOut                // reads: none left, the buyer has none
	already                // reads: the buyer has one
	giveBack               // a reservation ended: its buyer's unit back on sale
	none                   // changes nothing: an untrue 201 that PostgreSQL has no order for
	restock                // a merchant added units (buy.units)
)

// buy is one purchase as the model sees it: porcupine's input.
type buy struct {
	Purchase
	effect effect
	stock  int   // the product's stock before the sale: the model's Init knows no product
	slot   int   // the buyer's bit in units.bought; -1 for a buyer with this one operation
	slots  int   // the product's buyers with a slot
	order  int64 // PostgreSQL's order that resolved an unknown outcome
	units  int   // a restock's units
	unseen bool  // an order in PostgreSQL that no request of the history made
	// untrue says why PostgreSQL's orders contradict this answer (see truth.go); such a buy
	// is never legal. "": not contradicted.
	untrue string
	// call and ret are its invoke and completion on porcupine's clock, ret never for an
	// unknown outcome.
	call, ret int64
}

// units is the model's state for one product. Values are immutable: took copies.
type units struct {
	left   int      // -1: the sale has not begun
	bought []uint64 // the slots of the buyers with an order, a bit each
}

func (u units) has(slot int) bool {
	return slot >= 0 && slot/64 < len(u.bought) && u.bought[slot/64]&(1<<(slot%64)) != 0
}

func (u units) took(b *buy) units {
	next := units{left: u.left - 1, bought: u.bought}
	if b.slot >= 0 {
		next.bought = make([]uint64, (b.slots+63)/64)
		copy(next.bought, u.bought)
		next.bought[b.slot/64] |= 1 << (b.slot % 64)
	}
	return next
}

// gaveBack is u once the reservation of b's buyer ended: a unit more, the buyer has none.
func (u units) gaveBack(b *buy) units {
	next := units{left: u.left + 1, bought: make([]uint64, len(u.bought))}
	copy(next.bought, u.bought)
	next.bought[b.slot/64] &^= 1 << (b.slot % 64)
	return next
}

func stepPurchase(state, input, _ any) (bool, any) {
	u, b := state.(units), input.(*buy)
	if b.untrue != "" {
		return false, u
	}
	if u.left < 0 {
		u = units{left: b.stock}
	}
	has := u.has(b.slot)
	switch b.effect {
	case take:
		if u.left == 0 || has {
			return false, u
		}
		return true, u.took(b)
	case mayTake:
		if u.left == 0 || has {
			return true, u
		}
		return true, u.took(b)
	case soldOut:
		return u.left == 0 && !has, u
	case giveBack:
		if !has {
			return false, u
		}
		return true, u.gaveBack(b)
	case none:
		return true, u
	case restock:
		return true, units{left: u.left + b.units, bought: u.bought}
	default: // already
		return has, u
	}
}

// purchaseModel is the stock model of CheckPurchases, partitioned by product.
var purchaseModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		return partition(history, func(op porcupine.Operation) int64 { return op.Input.(*buy).Product })
	},
	Init: func() any { return units{left: -1} },
	Step: stepPurchase,
	Equal: func(a, b any) bool {
		x, y := a.(units), b.(units)
		if x.left != y.left {
			return false
		}
		for i := range max(len(x.bought), len(y.bought)) {
			if word(x.bought, i) != word(y.bought, i) {
				return false
			}
		}
		return true
	},
	Hash: func(state any) uint64 {
		u := state.(units)
		h := mix(uint64(u.left))
		for i, w := range u.bought {
			if w != 0 {
				h ^= mix(w ^ mix(uint64(i)+1))
			}
		}
		return h
	},
	DescribeOperation: func(input, _ any) string { return input.(*buy).String() },
	DescribeState: func(state any) string {
		switch u := state.(units); u.left {
		case -1:
			return "on sale"
		case 0:
			return "sold out"
		default:
			return strconv.Itoa(u.left) + " left"
		}
	},
	DescribeOperationMetadata: func(info any) string {
		b, _ := info.(*buy)
		if b == nil || b.unseen {
			return ""
		}
		sent, answered := "sent ", ", answered "
		if b.effect == giveBack {
			sent, answered = "ended ", ", back by "
		}
		s := sent + b.Invoke.Format("15:04:05.000000")
		if !b.Complete.IsZero() {
			s += answered + b.Complete.Format("15:04:05.000000")
		}
		if b.Process != "" {
			s += ", by " + b.Process
		}
		return s
	},
}

func word(w []uint64, i int) uint64 {
	if i < len(w) {
		return w[i]
	}
	return 0
}

// mix is splitmix64's finalizer.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// String describes the purchase and how the model reads it, e.g. "user 7: 201 order 3", and
// what PostgreSQL says against it, if anything.
func (b *buy) String() string {
	if b.effect == restock {
		return "merchant: " + b.answer()
	}
	s := "user " + strconv.FormatInt(b.User, 10) + ": " + b.answer()
	if b.untrue != "" {
		s += " (untrue: " + b.untrue + ")"
	}
	return s
}

// answer is what the buyer was answered and how the model reads it, e.g. "201 order 3".
func (b *buy) answer() string {
	s := "no answer"
	switch {
	case b.unseen:
		return fmt.Sprintf("order %d in PostgreSQL", b.order)
	case b.effect == giveBack:
		return fmt.Sprintf("order %d ended, its unit back on sale", b.order)
	case b.effect == restock:
		return fmt.Sprintf("a restock of %d units", b.units)
	case b.Status == 202:
		s = "202 queued"
	case b.Status != 0:
		s = strconv.Itoa(b.Status)
		if b.Code != "" {
			s += " " + b.Code
		}
	}
	if b.Order != 0 {
		s += fmt.Sprintf(" order %d", b.Order)
	}
	switch {
	case b.effect == take && b.Outcome == Unknown:
		s += fmt.Sprintf("; its order %d in PostgreSQL: took a unit", b.order)
	case b.effect == mayTake:
		s += ": may have taken a unit"
	}
	return s
}
