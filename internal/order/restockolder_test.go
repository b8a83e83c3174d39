package order_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestGateBackOlderAfterRestock, for the redis and queue strategies: a redis-server of the
// test's own sells out a product, a snapshot is taken, the product is restocked (3 units, in
// PostgreSQL and in the gate), and Redis is started again from the snapshot: its gate is sold
// out without the restock. The verification at the first sold-out answer redoes the restock
// (its key is not in the old gate's set), so exactly 3 more sell; a replay of the restock's key
// adds nothing, and the audit is consistent.
func TestGateBackOlderAfterRestock(t *testing.T) {
	t.Parallel()
	for _, s := range []inventory.Strategy{inventory.StrategyRedis, inventory.StrategyQueue} {
		t.Run(string(s), func(t *testing.T) {
			srv := servers.StartRedis(t)
			rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
			t.Cleanup(func() { rdb.Close() })
			gdb := testenv.Postgres(t)
			a := app.New(app.Config{Plug: teaching, DB: gdb, Redis: rdb, RedisPrefix: testenv.Name("t"), Order: noSweeper})
			t.Cleanup(func() { a.Close() })
			e := &env{db: gdb, rdb: rdb, prefix: a.Keys.Prefix, app: a, store: labStore(gdb)}
			svc, ctx := a.Orders, context.Background()
			p := e.product(t, 2, s, 0)
			buy(t, svc, p.ID, 1)
			buy(t, svc, p.ID, 2)
			e.wantAudit(t, p.ID, 2, 0)
			srv.Snapshot(t)
			if _, err := svc.Restock(ctx, p.ID, "pallet", 3); err != nil {
				t.Fatal(err)
			}
			e.wantAudit(t, p.ID, 2, 3)
			srv.Stop()
			srv.Start()
			if a := e.audit(t, p.ID); a.Consistent {
				t.Fatalf("audit after the restart = %+v: the gate should be the snapshot's, without the restock", a)
			}
			for u := int64(3); u <= 5; u++ {
				if err := retryBusy(func() error { _, err := svc.Purchase(ctx, p.ID, u); return err }); err != nil &&
					!errors.Is(err, order.ErrAccepted) {
					t.Fatalf("user %d, with the restock's units in PostgreSQL: %v", u, err)
				}
			}
			waitOrders(t, e, p.ID, 5)
			if _, err := svc.Restock(ctx, p.ID, "pallet", 3); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.Purchase(ctx, p.ID, 6); !errors.Is(err, inventory.ErrSoldOut) {
				t.Fatalf("user 6, with no unit left: %v, want sold out", err)
			}
			e.wantAudit(t, p.ID, 5, 0)
		})
	}
}
