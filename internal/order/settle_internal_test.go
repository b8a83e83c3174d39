package order

import (
	"context"
	"log/slog"
	"testing"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// TestSettleAfterFailover: settle answers whether the orders a COMMIT that got no answer
// inserted are there, on the PostgreSQL it asks, which after a failover is the new primary.
// That primary may hand out again the ids the old one handed out last (a sequence's state
// reaches the standby in the WAL the old primary may not have sent), so an id says nothing by
// itself: the order must be the buyer's, and not the one settle's own probe inserts (which
// takes the next id: the lost order's). The code before this test matched ids alone and
// answered "committed" in both cases (TestPostgresPrimaryCutOff caught it once: a 201 for an
// order the new primary does not have).
func TestSettleAfterFailover(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	rdb, prefix := testenv.Redis(t)
	store := inventory.NewStore(gdb)
	keys := inventory.Keys{Prefix: prefix}
	s := NewService(Deps{Products: store, SoldOut: inventory.NewSoldOut(rdb, store, keys, slog.New(slog.DiscardHandler), inventory.SoldOutOptions{}),
		Keys: keys, Logger: slog.New(slog.DiscardHandler)}, Config{})
	ctx := context.Background()
	p, err := store.Create(ctx, inventory.NewProduct{Name: "p", Stock: 10, Strategy: inventory.StrategyPessimistic})
	if err != nil {
		t.Fatal(err)
	}
	insert := func(user int64) int64 {
		t.Helper()
		var id int64
		if err := gdb.Raw(`INSERT INTO orders (product_id, user_id) VALUES (?, ?) RETURNING id`, p.ID, user).Scan(&id).Error; err != nil {
			t.Fatal(err)
		}
		return id
	}
	next := func() int64 { // the id the next order gets, left to it
		t.Helper()
		var id int64
		if err := gdb.Raw(`SELECT setval('orders_id_seq', nextval('orders_id_seq'), false)`).Scan(&id).Error; err != nil {
			t.Fatal(err)
		}
		return id
	}
	kept := insert(1)
	others := insert(2)
	for _, c := range []struct {
		name      string
		user      int64
		id        func() int64
		committed bool
	}{
		{"the buyer's order is there", 1, func() int64 { return kept }, true},
		{"another buyer's order has the lost order's id", 3, func() int64 { return others }, false},
		{"the probe's own order takes the lost order's id", 4, next, false},
	} {
		id := c.id()
		committed, err := s.c.settle(ctx, p.ID, []int64{c.user}, []int64{id})
		if err != nil || committed != c.committed {
			t.Errorf("%s: settle(user %d, order %d) = %v, %v; want %v", c.name, c.user, id, committed, err, c.committed)
		}
	}
	var left int64
	gdb.Raw(`SELECT count(*) FROM orders WHERE product_id = ?`, p.ID).Scan(&left)
	if left != 2 {
		t.Errorf("orders after settling = %d, want 2: the probe's inserts must not stay", left)
	}
}
