package inventory_test

import (
	"context"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestLiftForgottenByRedis: Redis comes back from a snapshot taken while the product was
// marked, so the mark is back and the lift made since is forgotten, while the unit is back
// in PostgreSQL. No process says sold out, and none marks it again from what it finds in
// Redis: the mark is of another data set, and the first mark after the restart waits the
// hold. Then the unit sells again and the hold ends: the product is marked once more.
func TestLiftForgottenByRedis(t *testing.T) {
	t.Parallel()
	srv := servers.StartRedis(t)
	keys := inventory.Keys{Prefix: testenv.Name("t")}
	p, store, tx := createProduct(t, inventory.NewProduct{Name: "p", Stock: 1})
	stock := func(n int) {
		t.Helper()
		if err := tx.Exec(`UPDATE products SET stock = ? WHERE id = ?`, n, p.ID).Error; err != nil {
			t.Fatal(err)
		}
	}
	stock(0) // sold
	a, b := process(t, srv.Addr, store, keys), process(t, srv.Addr, store, keys)
	run(t, a.Listen)
	run(t, b.Listen)
	markedEverywhere(t, p.ID, a, b)
	srv.Snapshot(t)
	ctx := context.Background()
	if err := a.Lift(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	stock(1) // the unit is back
	srv.Stop()
	srv.Start()
	if got, err := srv.Client().Get(ctx, keys.SoldOut(p.ID)).Result(); err != nil || got[:2] != "m:" {
		t.Fatalf("after the restart the mark is %q (%v), want the snapshot's mark back", got, err)
	}
	var lies int
	for end := time.Now().Add(3 * testLease); time.Now().Before(end); time.Sleep(testLease / 20) {
		b.Mark(ctx, p.ID)
		if a.Is(p.ID) || b.Is(p.ID) {
			lies++
		}
	}
	if lies > 0 {
		t.Errorf("%d checks said sold out with the unit back, after Redis forgot the lift", lies)
	}
	stock(0) // sold again
	b.Mark(ctx, p.ID)
	if b.Is(p.ID) {
		t.Error("marked again within the hold after Redis came back as another data set")
	}
	markedEverywhere(t, p.ID, b) // after the hold (3 s)
}
