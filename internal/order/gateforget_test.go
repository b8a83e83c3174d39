package order_test

import (
	"context"
	"errors"
	"testing"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestGateBackOlderForgetsBuyers, for the redis and queue strategies: Redis is restarted from
// a snapshot taken after user 1 bought and before users 2 and 3 did, so the gate has units
// left and has forgotten them. A retry of each must be answered already_purchased with its
// order (the game day saw the queue answer one 201 and another sold_out), new buyers sold_out,
// and PostgreSQL and the gate must agree at the end.
func TestGateBackOlderForgetsBuyers(t *testing.T) {
	t.Parallel()
	for _, s := range []inventory.Strategy{inventory.StrategyRedis, inventory.StrategyQueue} {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel()
			srv := servers.StartRedis(t)
			e := ownRedisEnv(t, srv.Addr)
			svc, ctx := e.app.Orders, context.Background()
			p := e.product(t, 3, s, 0)
			buy(t, svc, p.ID, 1)
			e.wantAudit(t, p.ID, 1, 2)
			srv.Snapshot(t)
			orders := map[int64]order.Order{2: buy(t, svc, p.ID, 2), 3: buy(t, svc, p.ID, 3)}
			srv.Stop()
			srv.Start()

			retry := func(user int64) {
				t.Helper()
				err := retryBusy(func() error { _, err := svc.Purchase(ctx, p.ID, user); return err })
				var had *order.PurchasedError
				if !errors.As(err, &had) || had.Order.ID != orders[user].ID {
					t.Fatalf("user %d, forgotten by Redis, retries: %v, want already purchased, order %d", user, err, orders[user].ID)
				}
			}
			retry(2) // the gate has units left: admitted again, and told its order
			for _, u := range []int64{4, 5, 6} {
				err := retryBusy(func() error { _, err := svc.Purchase(ctx, p.ID, u); return err })
				if !errors.Is(err, inventory.ErrSoldOut) {
					t.Fatalf("new user %d: %v, want sold out", u, err)
				}
			}
			retry(3) // the gate sold out, in a data set it was not verified in
			retry(2)
			if s == inventory.StrategyRedis {
				e.wantAudit(t, p.ID, 3, 0)
				return
			}
			// The gate came back with user 2's and user 3's units free. User 2's retry took
			// its unit back; user 4 took user 3's, which PostgreSQL had sold: a dead letter
			// (answered sold_out), which the audit reports. Then the gate is sold out.
			au := e.audit(t, p.ID)
			if q := au.Queue; au.Orders != 3 || au.Stock != 0 || au.DuplicateUsers != 0 ||
				q.Stock != 0 || q.Buyers != 3 || q.Queued != 0 || q.Dead != 1 {
				t.Fatalf("audit = %+v, queue %+v: want 3 orders, 0 left in both, 3 buyers, 1 dead letter", au, q)
			}
		})
	}
}
