package history_test

import (
	"testing"
	"time"

	"github.com/seckill/seckill/internal/history"
)

// refill is a restock of units of product 1 from invoke to complete (ms).
func refill(units, invoke, complete int) history.Restock {
	return history.Restock{Product: 1, Units: units, Invoke: at(invoke), Complete: at(complete)}
}

// TestCheckRestocks holds the stock model to restocks: the units arrive at some instant
// between the restock's invoke and its completion, so a sold_out before it and 201s after it
// are legal, and more 201s than every unit the product had, or a 201 while sold out before any
// restock was sent, are not (the negative controls of the chaos suite's restock tests).
func TestCheckRestocks(t *testing.T) {
	stock := map[int64]int{1: 1}
	for _, tt := range []struct {
		name     string
		ops      []history.Purchase
		restocks []history.Restock
		want     history.Verdict
	}{
		{"sold out, restocked, sold again", []history.Purchase{
			pur(1, 201, "", 0, 1), pur(2, 409, soldOut, 2, 3), pur(3, 201, "", 20, 21), pur(4, 201, "", 22, 23),
			pur(5, 409, soldOut, 30, 31),
		}, []history.Restock{refill(2, 10, 12)}, history.Linearizable},
		{"a 201 racing the restock", []history.Purchase{
			pur(1, 201, "", 0, 1), pur(3, 201, "", 9, 15),
		}, []history.Restock{refill(1, 10, 12)}, history.Linearizable},
		{"two restocks", []history.Purchase{
			pur(1, 201, "", 0, 1), pur(2, 201, "", 20, 21), pur(3, 201, "", 40, 41), pur(4, 409, soldOut, 50, 51),
		}, []history.Restock{refill(1, 10, 12), refill(1, 30, 32)}, history.Linearizable},
		{"more 201s than every unit", []history.Purchase{
			pur(1, 201, "", 0, 1), pur(2, 201, "", 20, 21), pur(3, 201, "", 22, 23),
		}, []history.Restock{refill(1, 10, 12)}, history.Illegal},
		{"a 201 before the restock was sent, when sold out", []history.Purchase{
			pur(1, 201, "", 0, 1), pur(2, 201, "", 3, 4),
		}, []history.Restock{refill(1, 10, 12)}, history.Illegal},
		{"sold_out after the restock, with its unit left", []history.Purchase{
			pur(1, 201, "", 0, 1), pur(2, 409, soldOut, 20, 21),
		}, []history.Restock{refill(1, 10, 12)}, history.Illegal},
	} {
		t.Run(tt.name, func(t *testing.T) {
			check := func(t *testing.T) {
				res, err := history.CheckPurchases(tt.ops, history.Sale{Stock: stock, Restocks: tt.restocks}, 10*time.Second, t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != tt.want {
					t.Fatalf("verdict = %s, want %s (%s)", res.Verdict, tt.want, res)
				}
			}
			t.Run("counts and search", check)
			t.Run("search only", func(t *testing.T) { history.SearchOnly(t); check(t) })
		})
	}
}

func TestCheckRestocksMalformed(t *testing.T) {
	ops := []history.Purchase{pur(1, 201, "", 0, 1)}
	for name, r := range map[string]history.Restock{
		"no units":        refill(0, 0, 1),
		"no completion":   {Product: 1, Units: 1, Invoke: at(0)},
		"backwards":       refill(1, 5, 1),
		"unknown product": {Product: 2, Units: 1, Invoke: at(0), Complete: at(1)},
	} {
		if _, err := history.CheckPurchases(ops, history.Sale{Stock: map[int64]int{1: 1}, Restocks: []history.Restock{r}}, time.Second, t.TempDir()); err == nil {
			t.Errorf("%s: checked, want an error", name)
		}
	}
}
