package inventory_test

import (
	"context"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// TestGateReturnOnce: a unit of an ended reservation goes back to the gate once per order,
// however often its return is driven, and its buyer leaves the buyers; a seeding that marks
// an order returned (its stock counts the unit) makes driving it later change nothing; a gate
// that does not exist is left alone.
func TestGateReturnOnce(t *testing.T) {
	t.Parallel()
	g, rdb, keys := seededGate(t, 2)
	ctx := context.Background()
	for _, u := range []int64{7, 8} {
		if err := g.Admit(ctx, 1, u, "t", time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Confirm(ctx, 1, u); err != nil {
			t.Fatal(err)
		}
	}
	want := func(stock, buyers int64) {
		t.Helper()
		st, err := g.State(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		if st.Stock != stock || st.Buyers != buyers || st.Pending != 0 {
			t.Fatalf("gate = %+v, want stock %d, %d buyers, nothing pending", st, stock, buyers)
		}
	}
	want(0, 2)
	for i, wantN := range []int{1, 0, 0} {
		n, err := g.Return(ctx, 1, []inventory.Ended{{Order: 100, User: 7}})
		if err != nil || n != wantN {
			t.Fatalf("return #%d = %d, %v; want %d", i+1, n, err, wantN)
		}
		want(1, 1)
	}
	if err := g.Admit(ctx, 1, 7, "again", time.Minute); err != nil {
		t.Fatalf("the buyer whose reservation ended buys again: %v", err)
	}

	// A seeding whose stock counts order 101's unit marks it returned.
	seed := g.StartSeeding(1)
	if err := seed.Add(ctx, []int64{7}); err != nil {
		t.Fatal(err)
	}
	seed.Returned([]int64{101})
	if _, err := seed.Publish(ctx, inventory.SeedSync, 1); err != nil {
		t.Fatal(err)
	}
	if n, err := g.Return(ctx, 1, []inventory.Ended{{Order: 101, User: 8}}); err != nil || n != 0 {
		t.Fatalf("return of an order the seeding counted = %d, %v; want 0", n, err)
	}
	want(1, 1)

	rdb.Del(ctx, keys.GateStock(1), keys.GateBuyers(1), keys.GateReturned(1))
	if n, err := g.Return(ctx, 1, []inventory.Ended{{Order: 102, User: 7}}); err != nil || n != 0 {
		t.Fatalf("return to a gate that does not exist = %d, %v; want 0", n, err)
	}
	if st, _ := g.State(ctx, 1); st.Seeded {
		t.Fatalf("the return created the gate: %+v", st)
	}
}
