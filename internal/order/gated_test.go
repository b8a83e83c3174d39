package order_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/labapi"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/faultproxy"
)

// seededProduct creates a product of stock units sold by the redis strategy and seeds its
// gate with a purchase by user 1, which leaves stock-1 units.
func (e *env) seededProduct(t *testing.T, stock int) inventory.Product {
	t.Helper()
	p := e.product(t, stock, inventory.StrategyRedis, 0)
	if _, err := e.app.Orders.Purchase(context.Background(), p.ID, 1); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGateReconcilesStrandedAdmissions: a process died between its buyers' admissions and
// their answers reaching the gate: one had committed its order, one had not. The gate holds
// their units, so it is sold out while PostgreSQL still has stock; once the admissions
// expire, the next buyers reconcile them (the committed one confirmed, the other's unit given
// back) and the sale sells out exactly, with the gate agreeing.
func TestGateReconcilesStrandedAdmissions(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{})
	p := e.seededProduct(t, 3)
	ctx := context.Background()
	for _, u := range []int64{100, 101} { // the dead process's admissions
		if err := e.app.Gate.Admit(ctx, p.ID, u, "dead", 50*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	// user 101's purchase committed, the process died before confirming it
	writeOrders(t, e.db, p.ID, 101, 101)
	time.Sleep(100 * time.Millisecond) // the admissions expire
	var bought []int64
	for u := int64(2); u <= 10; u++ {
		_, err := e.app.Orders.Purchase(ctx, p.ID, u)
		switch {
		case err == nil:
			bought = append(bought, u)
		case !errors.Is(err, inventory.ErrSoldOut):
			t.Fatalf("purchase by %d = %v", u, err)
		}
	}
	if len(bought) != 1 {
		t.Errorf("bought after the reconciliation: %v, want one buyer (user 100's unit)", bought)
	}
	e.wantAudit(t, p.ID, 3, 0) // sold out, the gate agreeing
}

// TestGateSyncedWhenPostgresSellsTheLastUnit: the gate lost a purchase that PostgreSQL wrote
// (its admission and confirmation, as a Redis failover to a replica that missed them loses
// them), so it counts one unit more than PostgreSQL. The buyer who takes PostgreSQL's last unit
// leaves the gate with one unit left, which no refusal would ever correct (sold-out answers no
// longer reach the gate): that batch's leader syncs it, and the audit agrees.
func TestGateSyncedWhenPostgresSellsTheLastUnit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{})
	p := e.seededProduct(t, 3)         // user 1 bought: 2 left in both
	writeOrders(t, e.db, p.ID, 50, 50) // user 50's purchase, which the gate lost: 1 left in PostgreSQL
	if _, err := e.app.Orders.Purchase(context.Background(), p.ID, 2); err != nil {
		t.Fatal(err)
	}
	e.wantAudit(t, p.ID, 3, 0) // sold out, the gate agreeing
}

// TestGateSeedsOnceInChunks: a product with 25 orders whose gate is missing meets a crowd
// at two processes at once. The gate is seeded once in all (one process, one goroutine),
// SeedChunk buyers at a time, and agrees with PostgreSQL; a buyer who bought before is told
// so with their order.
func TestGateSeedsOnceInChunks(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{})
	p := e.product(t, 100, inventory.StrategyRedis, 0)
	writeOrders(t, e.db, p.ID, 1, 25)
	logs := &testenv.Buffer{}
	cfg := order.Config{SeedChunk: 4}
	services := []*order.Service{newService(t, e, process{log: logs}, cfg), newService(t, e, process{log: logs}, cfg)}
	ctx := context.Background()
	var wg sync.WaitGroup
	for u := int64(1001); u <= 1020; u++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := services[u%2].Purchase(ctx, p.ID, u); err != nil {
				t.Errorf("purchase by %d: %v", u, err)
			}
		}()
	}
	wg.Wait()
	_, err := services[0].Purchase(ctx, p.ID, 7)
	var pe *order.PurchasedError
	if !errors.As(err, &pe) || pe.Order.UserID != 7 || pe.Order.ID == 0 {
		t.Errorf("purchase by an earlier buyer = %v, want already purchased with the order", err)
	}
	if n := strings.Count(logs.String(), "gate seeded from PostgreSQL"); n != 1 {
		t.Errorf("the gate was seeded %d times, want once:\n%s", n, logs)
	}
	if a := e.audit(t, p.ID); a.Orders != 45 || a.Redis == nil || a.Redis.Buyers != 45 || !a.Consistent {
		t.Fatalf("audit = %+v (redis %+v)", a, a.Redis)
	}
}

// TestAdmitReplyLost: Redis runs a buyer's admission but its reply never comes back in time
// (a proxy holds Redis's replies past the client's read timeout). The admission may have
// happened, so the purchase gives it back by its attempt token before answering 503: the
// unit is free again and nothing is pending.
func TestAdmitReplyLost(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{})
	p := e.seededProduct(t, 5)
	ctx := context.Background()
	px := faultproxy.New(t, "", testenv.RedisAddr(t))
	slow := redis.NewClient(&redis.Options{Addr: px.Addr(), ReadTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { slow.Close() })
	s := newService(t, e, process{rdb: slow}, order.Config{})
	px.SetReplyLatency(time.Second)
	if _, err := s.Purchase(ctx, p.ID, 2); !errors.Is(err, order.ErrUnavailable) {
		t.Fatalf("purchase whose admission reply was lost = %v, want ErrUnavailable", err)
	}
	testenv.Eventually(t, 5*time.Second, "the unit back at the gate", func() bool {
		g, _ := e.app.Gate.State(ctx, p.ID)
		return g.Stock == 4 && g.Pending == 0
	})
	if _, err := e.app.Orders.Purchase(ctx, p.ID, 2); err != nil {
		t.Fatalf("the same buyer once Redis answers again: %v", err)
	}
}

// TestNaiveMarksNothingSoldOut: the naive strategy never publishes a sold-out mark, since its
// own lost updates can raise the stock again after someone read zero.
func TestNaiveMarksNothingSoldOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t, order.Config{})
	p := e.product(t, 1, labapi.Naive, 0)
	ctx := context.Background()
	if _, err := e.app.Orders.Purchase(ctx, p.ID, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := e.app.Orders.Purchase(ctx, p.ID, 2); !errors.Is(err, inventory.ErrSoldOut) {
		t.Fatalf("purchase of a sold-out naive product = %v", err)
	}
	if e.app.SoldOut.Is(p.ID) {
		t.Fatal("the naive product is marked sold out")
	}
}
