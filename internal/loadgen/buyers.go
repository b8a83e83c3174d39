package loadgen

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// buyerAnswers is what one buyer was answered in a run (purchaseLog.add): how many answers
// of each outcome, and the orders its 201 and already_purchased answers named.
type buyerAnswers struct {
	n       [NumOutcomes]int32
	blind   int32   // its 201s that named no order
	created []int64 // the distinct orders its other 201s named
	already []int64 // the distinct orders its already_purchased answers named
}

func (b *buyerAnswers) note(o Outcome, order int64) {
	if o >= NumOutcomes {
		return
	}
	b.n[o]++
	switch {
	case o == Bought && order == 0:
		b.blind++
	case o == Bought && !slices.Contains(b.created, order):
		b.created = append(b.created, order)
	case o == AlreadyPurchased && order != 0 && !slices.Contains(b.already, order):
		b.already = append(b.already, order)
	}
}

// writers is how many of the buyer's requests may have written an order no 201 named: its
// 202s, its answers that left the outcome open (Outcome.isUnclear), and its 201s that named
// no order.
func (b *buyerAnswers) writers() int {
	n := int(b.n[Accepted] + b.blind)
	for o := range NumOutcomes {
		if o.isUnclear() {
			n += int(b.n[o])
		}
	}
	return n
}

// said is the buyer's answers by outcome, e.g. "busy ×2, sold_out ×1".
func (b *buyerAnswers) said() string {
	var parts []string
	for o := range NumOutcomes {
		if b.n[o] > 0 {
			parts = append(parts, fmt.Sprintf("%s ×%d", o, b.n[o]))
		}
	}
	return strings.Join(parts, ", ")
}

// buyersAudit is the run's answers held to PostgreSQL's orders of its product, buyer by
// buyer (checkBuyers).
type buyersAudit struct {
	Buyers int `json:"buyers"` // buyers who sent a request in the run
	Orders int `json:"orders"` // the product's orders made during the run, of any status
	// Untrue is how many buyers' answers PostgreSQL's orders contradict; Problems says what,
	// for the first maxBuyerProblems of them (by user id), one each.
	Untrue   int      `json:"untrue"`
	Problems []string `json:"problems,omitempty"`
}

// maxBuyerProblems bounds buyersAudit.Problems.
const maxBuyerProblems = 8

// checkBuyers holds answers (user → answers) to orders, every order of the product once the run
// settled (user → order ids), those in before excepted: each 201 and already_purchased must name
// an order of its own buyer, a buyer answered 201, 202 or already_purchased must have one, and
// each order made during the run must be explained by a request of its buyer (docs/loadtest.md).
func checkBuyers(answers map[int64]*buyerAnswers, orders map[int64][]int64, before map[int64]bool) *buyersAudit {
	owner := map[int64]int64{}
	for user, mine := range orders {
		for _, o := range mine {
			owner[o] = user
		}
	}
	whose := func(o int64) string {
		if u, ok := owner[o]; ok {
			return fmt.Sprintf("user %d's", u)
		}
		return "not in PostgreSQL"
	}
	res := &buyersAudit{Buyers: len(answers)}
	problem := map[int64]string{} // user -> the first thing untrue of their answers
	note := func(user int64, format string, args ...any) {
		if _, ok := problem[user]; !ok {
			problem[user] = fmt.Sprintf(format, args...)
		}
	}
	for user, a := range answers {
		mine := orders[user]
		if len(mine) == 0 && a.n[Bought]+a.n[Accepted]+a.n[AlreadyPurchased] > 0 {
			note(user, "user %d was answered %s but has no order in PostgreSQL", user, a.admitted())
			continue
		}
		for _, o := range a.created {
			if !slices.Contains(mine, o) {
				note(user, "user %d was answered 201 naming order %d, which is %s", user, o, whose(o))
			}
		}
		for _, o := range a.already {
			if !slices.Contains(mine, o) {
				note(user, "user %d was answered already_purchased naming order %d, which is %s", user, o, whose(o))
			}
		}
	}
	for user, mine := range orders {
		a := answers[user]
		var unnamed []int64 // the orders made during the run that no 201 of the buyer named
		for _, o := range mine {
			if before[o] {
				continue
			}
			res.Orders++
			if a == nil || !slices.Contains(a.created, o) {
				unnamed = append(unnamed, o)
			}
		}
		switch {
		case len(unnamed) == 0:
		case a == nil:
			note(user, "user %d has order %d in PostgreSQL but sent no request in the run", user, unnamed[0])
		case a.writers() == 0 && len(a.created) == 0:
			note(user, "user %d has order %d in PostgreSQL, but every answer of theirs said nothing was written (%s)",
				user, unnamed[0], a.said())
		case len(unnamed) > a.writers():
			note(user, "user %d has %d orders in PostgreSQL that no 201 named (%v), but only %d requests that may have written one (%s)",
				user, len(unnamed), unnamed, a.writers(), a.said())
		}
	}
	res.Untrue = len(problem)
	for _, user := range slices.Sorted(maps.Keys(problem)) {
		if len(res.Problems) == maxBuyerProblems {
			break
		}
		res.Problems = append(res.Problems, problem[user])
	}
	return res
}

// admitted is the buyer's first answer that says it has an order, e.g. "201 (order 7)".
func (b *buyerAnswers) admitted() string {
	switch {
	case len(b.created) > 0:
		return fmt.Sprintf("201 (order %d)", b.created[0])
	case b.n[Bought] > 0:
		return "201"
	case b.n[Accepted] > 0:
		return "202"
	}
	if len(b.already) > 0 {
		return fmt.Sprintf("already_purchased (order %d)", b.already[0])
	}
	return "already_purchased"
}

// String is the audit in one line, e.g. "1200 buyers, 100 orders: each answer agrees with
// PostgreSQL".
func (b *buyersAudit) String() string {
	s := fmt.Sprintf("%d buyers, %d orders made in the run: ", b.Buyers, b.Orders)
	if b.Untrue == 0 {
		return s + "every answer agrees with PostgreSQL, buyer by buyer"
	}
	return s + fmt.Sprintf("%d buyers' answers disagree with PostgreSQL", b.Untrue)
}

// checkBuyers checks the answers l recorded against orders and before (see checkBuyers).
func (l *purchaseLog) checkBuyers(orders map[int64][]int64, before map[int64]bool) *buyersAudit {
	l.mu.Lock()
	defer l.mu.Unlock()
	return checkBuyers(l.buyers, orders, before)
}
