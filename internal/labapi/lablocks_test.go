package labapi

import (
	"context"
	"testing"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// TestLabLocksBuiltOnFirstUse: an API process builds the lab's locks (and the lock clients
// they need) only when a lab product is bought, once; selling other products builds none.
// After Close, a lab purchase is unavailable and builds nothing.
func TestLabLocksBuiltOnFirstUse(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	rdb, prefix := testenv.Redis(t)
	var locks *labLocks // the lab's, as Plug built them for the app
	plug := func(parts app.Parts) app.Plugins {
		p := Plug(Options{})(parts)
		locks = p.Strategies[Lab].Strategy.(*labBuyer).locks
		return p
	}
	a := app.New(app.Config{DB: gdb, Redis: rdb, RedisPrefix: prefix, Plug: plug})
	closed := false
	t.Cleanup(func() {
		if !closed {
			a.Close()
		}
	})
	ctx := context.Background()
	products := inventory.NewStore(gdb)
	products.Plug(Lab, checkLab)
	create := func(np inventory.NewProduct) int64 {
		t.Helper()
		p, err := products.Create(ctx, np)
		if err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	built := func() bool {
		locks.mu.Lock()
		defer locks.mu.Unlock()
		return locks.locks != nil
	}
	if _, err := a.Orders.Purchase(ctx, create(inventory.NewProduct{Name: "p", Stock: 1}), 1); err != nil {
		t.Fatal(err)
	}
	if built() {
		t.Fatal("the lab's locks were built for a dlock purchase")
	}
	lab := create(inventory.NewProduct{Name: "lab", Stock: 2, Strategy: Lab, LabLock: "lease"})
	if _, err := a.Orders.Purchase(ctx, lab, 1); err != nil {
		t.Fatal(err)
	}
	if !built() {
		t.Fatal("the lab's locks were not built for a lab purchase")
	}
	first := locks.locks
	if _, err := a.Orders.Purchase(ctx, lab, 2); err != nil {
		t.Fatal(err)
	}
	if locks.locks != first {
		t.Error("the lab's locks were built again")
	}
	closed = true
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := locks.Acquire(ctx, "lease", "k", 0, 0); err == nil {
		t.Error("a lab lock was taken after Close")
	}
}
