package order_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// TestRestockEveryStrategy: a product sold out by each production strategy, restocked with N
// units, sells exactly N more; replays of the restock's key (one after, several at once) add
// nothing; the audit stays consistent (Redis agreeing) and counts the units.
func TestRestockEveryStrategy(t *testing.T) {
	e := newEnv(t, order.Config{})
	ctx := context.Background()
	for _, s := range inventory.Strategies {
		t.Run(string(s), func(t *testing.T) {
			const stock, units = 3, 4
			p := e.product(t, stock, s, 0)
			first := buyers(1, 6)
			sold := bought(buyAll(e.app.Orders, p.ID, first))
			if sold != stock {
				t.Fatalf("sold %d of %d before the restock", sold, stock)
			}
			waitOrders(t, e, p.ID, stock)
			r, err := e.app.Orders.Restock(ctx, p.ID, "delivery-1", units)
			if err != nil || r.Units != units || r.Replayed {
				t.Fatalf("Restock = %+v, %v", r, err)
			}
			var wg sync.WaitGroup
			for range 4 { // replays at once: each the first answer again, none adding
				wg.Go(func() {
					again, err := e.app.Orders.Restock(ctx, p.ID, "delivery-1", units)
					if err != nil || !again.Replayed || !again.CreatedAt.Equal(r.CreatedAt) {
						t.Errorf("replay = %+v, %v; want the first answer %+v", again, err, r)
					}
				})
			}
			wg.Wait()
			next := buyers(100, 20)
			if got := bought(buyAll(e.app.Orders, p.ID, next)); got != units {
				t.Fatalf("sold %d after a restock of %d (and its replays)", got, units)
			}
			waitOrders(t, e, p.ID, stock+units)
			a := e.audit(t, p.ID)
			if a.InitialStock != stock+units || a.Stock != 0 || a.Restocked != units || !a.Consistent {
				t.Fatalf("audit = %+v (redis %+v, queue %+v)", a, a.Redis, a.Queue)
			}
			if _, err := e.app.Orders.Restock(ctx, p.ID, "delivery-1", units+1); !errors.Is(err, order.ErrIdempotencyConflict) {
				t.Fatalf("the key with other units: %v, want ErrIdempotencyConflict", err)
			}
			if a := e.audit(t, p.ID); a.InitialStock != stock+units {
				t.Fatalf("a conflicting key changed initial_stock: %+v", a)
			}
		})
	}
}

// TestRestockRefusals: an unknown product, units of 0 or below, past MaxStock, or no key.
func TestRestockRefusals(t *testing.T) {
	e := newEnv(t, order.Config{})
	ctx := context.Background()
	p := e.product(t, inventory.MaxStock-5, inventory.StrategyDlock, 0)
	for _, c := range []struct {
		id    int64
		key   string
		units int
		want  error
	}{
		{1 << 50, "k", 1, inventory.ErrNotFound},
		{p.ID, "k", 0, inventory.ErrInvalid},
		{p.ID, "k", -1, inventory.ErrInvalid},
		{p.ID, "k", 6, inventory.ErrInvalid}, // initial_stock past MaxStock
		{p.ID, "", 1, inventory.ErrInvalid},
	} {
		if _, err := e.app.Orders.Restock(ctx, c.id, c.key, c.units); !errors.Is(err, c.want) {
			t.Errorf("Restock(%d, %q, %d) = %v, want %v", c.id, c.key, c.units, err, c.want)
		}
	}
	if _, err := e.app.Orders.Restock(ctx, p.ID, "k", 5); err != nil { // exactly MaxStock: fine
		t.Fatal(err)
	}
	// The refused key with 6 units added nothing and left no row: 5 were taken above.
	if a := e.audit(t, p.ID); a.InitialStock != inventory.MaxStock || a.Restocked != 5 {
		t.Fatalf("audit = %+v", a)
	}
}

// TestRestockGateCatchesUp: a restock whose gate part never ran (Redis failed after the
// commit) reaches the gate through the sweeper, once, and the replays of its key add nothing.
func TestRestockGateCatchesUp(t *testing.T) {
	e := newEnv(t, order.Config{SweepInterval: -1})
	ctx := context.Background()
	for _, s := range []inventory.Strategy{inventory.StrategyRedis, inventory.StrategyQueue} {
		t.Run(string(s), func(t *testing.T) {
			p := e.product(t, 2, s, 0)
			if got := bought(buyAll(e.app.Orders, p.ID, buyers(1, 3))); got != 2 {
				t.Fatalf("sold %d of 2", got)
			}
			waitOrders(t, e, p.ID, 2)
			if _, err := e.app.Orders.Restock(ctx, p.ID, "late", 3); err != nil {
				t.Fatal(err)
			}
			// Undo the gate's part, as if Redis had failed right after the COMMIT.
			keys := inventory.Keys{Prefix: e.prefix}
			e.rdb.DecrBy(ctx, keys.GateStock(p.ID), 3)
			e.rdb.SRem(ctx, keys.GateRestocked(p.ID), "late")
			mustExec(t, e.db, `UPDATE restocks SET gate_added_at = NULL, created_at = created_at - interval '1 minute' WHERE product_id = ?`, p.ID)
			if a := e.audit(t, p.ID); a.Consistent {
				t.Fatalf("negative control: a gate missing 3 units agrees: %+v", a)
			}
			st, err := e.app.Orders.Sweep(ctx, 100)
			if err != nil || st.GateRetried != 1 {
				t.Fatalf("Sweep = %+v, %v; want the restock driven again", st, err)
			}
			if st, _ := e.app.Orders.Sweep(ctx, 100); st.GateRetried != 0 {
				t.Fatalf("a second sweep drove it again: %+v", st)
			}
			if _, err := e.app.Orders.Restock(ctx, p.ID, "late", 3); err != nil {
				t.Fatal(err)
			}
			if got := bought(buyAll(e.app.Orders, p.ID, buyers(50, 6))); got != 3 {
				t.Fatalf("sold %d after a restock of 3", got)
			}
			waitOrders(t, e, p.ID, 5)
			e.wantAudit(t, p.ID, 5, 0)
		})
	}
}

// TestRestockBeforeSeeding: restocks of a redis product whose gate Redis lost, or never had,
// are counted by the seeding from PostgreSQL once, not again by the gate's part of the restock.
func TestRestockBeforeSeeding(t *testing.T) {
	e := newEnv(t, order.Config{SweepInterval: -1})
	ctx := context.Background()
	p := e.product(t, 1, inventory.StrategyRedis, 0)
	if _, err := e.app.Orders.Restock(ctx, p.ID, "a", 2); err != nil { // no gate yet
		t.Fatal(err)
	}
	if got := bought(buyAll(e.app.Orders, p.ID, buyers(1, 2))); got != 2 { // seeds the gate: 3 units
		t.Fatalf("sold %d", got)
	}
	// Redis loses the gate (not the set of restocks: a flush of the gate's stock only); the
	// restock's gate part is driven again after it: the new seeding counts it, the set says so.
	keys := inventory.Keys{Prefix: e.prefix}
	e.rdb.Del(ctx, keys.GateStock(p.ID), keys.GateRestocked(p.ID))
	mustExec(t, e.db, `UPDATE restocks SET gate_added_at = NULL, created_at = created_at - interval '1 minute' WHERE product_id = ?`, p.ID)
	if got := bought(buyAll(e.app.Orders, p.ID, buyers(10, 5))); got != 1 { // reseeded: 1 left
		t.Fatalf("sold %d of the 1 left after the gate was reseeded", got)
	}
	if st, err := e.app.Orders.Sweep(ctx, 100); err != nil || st.GateRetried != 1 {
		t.Fatalf("Sweep = %+v, %v", st, err)
	}
	e.wantAudit(t, p.ID, 3, 0) // the gate's stock agrees: the restock's units were not added again
	if got := bought(buyAll(e.app.Orders, p.ID, buyers(20, 5))); got != 0 {
		t.Fatalf("sold %d after the restock's gate part ran again on a seeded gate that counted it", got)
	}
	e.wantAudit(t, p.ID, 3, 0)
}

// buyers returns n user ids from first on.
func buyers(first int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = first + int64(i)
	}
	return out
}

// bought counts the outcomes that took a unit: bought, or accepted (queued).
func bought(outcomes []string) int {
	return count(outcomes, order.OutcomeBought) + count(outcomes, order.OutcomeAccepted)
}

// waitOrders waits up to 10 s for product id to have n orders (the queue strategy writes them
// after answering 202) and no purchase queued.
func waitOrders(t *testing.T, e *env, id int64, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		a := e.audit(t, id)
		if a.Orders == n && (a.Queue == nil || a.Queue.Queued == 0) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit = %+v, want %d orders", a, n)
		}
	}
}

// TestRestockRacesSeeding: buyers of a product with no stock and no gate yet seed its gate
// while the product is restocked: whichever way the seeding's snapshot and the restock's
// commit and gate part fall, the units are counted once (exactly 3 sell; the gate agrees).
func TestRestockRacesSeeding(t *testing.T) {
	e := newEnv(t, order.Config{SweepInterval: -1})
	ctx := context.Background()
	for _, s := range []inventory.Strategy{inventory.StrategyRedis, inventory.StrategyQueue} {
		for round := range 4 {
			p := e.product(t, 0, s, 0)
			var wg sync.WaitGroup
			var first []string
			wg.Go(func() { first = buyAll(e.app.Orders, p.ID, buyers(1, 8)) })
			wg.Go(func() {
				time.Sleep(time.Duration(round) * time.Millisecond)
				if _, err := e.app.Orders.Restock(ctx, p.ID, "r", 3); err != nil {
					t.Error(err)
				}
			})
			wg.Wait()
			later := buyAll(e.app.Orders, p.ID, buyers(100, 8))
			if got := bought(first) + bought(later); got != 3 {
				t.Fatalf("%s round %d: sold %d after a restock of 3 racing the seeding (%v, %v)", s, round, got, first, later)
			}
			waitOrders(t, e, p.ID, 3)
			e.wantAudit(t, p.ID, 3, 0)
		}
	}
}
