package history_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/history"
)

// TestShortcutsAgreeWithSearch holds the counts and the settled reads to porcupine's own
// search: on thousands of small random histories, legal and not (random answers, overlaps,
// unknown outcomes, PostgreSQL's orders or none), CheckPurchases decides as porcupine alone
// does.
func TestShortcutsAgreeWithSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	answers := []struct {
		status int
		code   string
	}{
		{201, ""}, {201, ""}, {409, api.CodeSoldOut}, {409, api.CodeSoldOut}, {409, api.CodeAlreadyPurchased},
		{0, ""}, {503, api.CodeOutcomeUnknown}, {202, ""}, {503, api.CodeBusy},
	}
	verdicts := map[history.Verdict]int{}
	for i := range 4000 {
		var ops []history.Purchase
		var sale history.Sale
		if i%2 == 0 {
			ops, sale = legalSale(rng)
			if rng.IntN(3) == 0 { // one answer changed
				a := answers[rng.IntN(len(answers))]
				op := &ops[rng.IntN(len(ops))]
				op.Status, op.Code, op.Outcome = a.status, a.code, history.PurchaseOutcome(a.status, a.code)
				if a.status != 0 && op.Complete.IsZero() {
					op.Complete = op.Invoke.Add(time.Millisecond)
				}
			}
		} else {
			stock := rng.IntN(4)
			for range 1 + rng.IntN(7) {
				a := answers[rng.IntN(len(answers))]
				invoke := rng.IntN(20)
				complete := invoke + rng.IntN(8)
				if a.status == 0 {
					complete = -1
				}
				ops = append(ops, pur(int64(1+rng.IntN(4)), a.status, a.code, invoke, complete))
			}
			sale = history.Sale{Stock: map[int64]int{1: stock}}
			if rng.IntN(3) > 0 {
				var users []int64
				for u := int64(1); u <= 4; u++ {
					if rng.IntN(2) == 0 {
						users = append(users, u)
					}
				}
				sale.Orders = orders(users...)
			}
		}
		got, err := history.CheckPurchases(ops, sale, 10*time.Second, t.TempDir())
		want, err2 := history.CheckPurchasesSearchOnly(ops, sale, 10*time.Second, t.TempDir())
		if err != nil || err2 != nil || got.Verdict != want.Verdict {
			t.Fatalf("history %d: CheckPurchases = %s (%v); porcupine alone = %s (%v)\nstock %d, orders %v\n%s",
				i, got, err, want, err2, sale.Stock[1], sale.Orders, describe(ops))
		}
		verdicts[got.Verdict]++
	}
	t.Logf("verdicts: %v", verdicts)
}

// legalSale is a small random legal history: purchases that take effect one after another,
// each at a point inside its interval, answered as the model says, some with no answer
// (which bought or did nothing); PostgreSQL's orders, or, one time in three, none.
func legalSale(rng *rand.Rand) ([]history.Purchase, history.Sale) {
	stock := rng.IntN(4)
	left, has, orders := stock, map[int64]bool{}, map[int64]int64{}
	var ops []history.Purchase
	point := 5
	for range 1 + rng.IntN(7) {
		point += rng.IntN(4)
		user := int64(1 + rng.IntN(4))
		p := pur(user, 0, "", point-rng.IntN(6), point+rng.IntN(6))
		switch {
		case has[user]:
			p.Status, p.Code = 409, api.CodeAlreadyPurchased
		case left == 0:
			p.Status, p.Code = 409, api.CodeSoldOut
		default:
			left--
			has[user], orders[user] = true, int64(100+len(orders))
			p.Status = 201
		}
		if rng.IntN(4) == 0 && p.Status == 201 || rng.IntN(8) == 0 {
			if p.Status != 201 || rng.IntN(2) == 0 { // an unknown that did nothing
				if p.Status == 201 {
					left++
					delete(has, user)
					delete(orders, user)
				}
			}
			p.Status, p.Code, p.Complete = 0, "", time.Time{}
		}
		p.Outcome = history.PurchaseOutcome(p.Status, p.Code)
		ops = append(ops, p)
	}
	sale := history.Sale{Stock: map[int64]int{1: stock}, Orders: map[int64]map[int64]int64{1: orders}}
	if rng.IntN(3) == 0 {
		sale.Orders = nil
	}
	return ops, sale
}

func describe(ops []history.Purchase) string {
	var b strings.Builder
	for _, op := range ops {
		end := "-"
		if !op.Complete.IsZero() {
			end = fmt.Sprint(op.Complete.Sub(t0).Milliseconds())
		}
		fmt.Fprintf(&b, "  user %d [%d, %s] %d %s\n", op.User, op.Invoke.Sub(t0).Milliseconds(), end, op.Status, op.Code)
	}
	return b.String()
}
