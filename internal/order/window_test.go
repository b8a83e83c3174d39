package order_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// marked is the context key of the purchases whose round trips TestWindowCostsNoRoundTrip counts.
type marked struct{}

// countHook counts the Redis commands sent on a marked context.
type countHook struct{ n *atomic.Int64 }

func (countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if ctx.Value(marked{}) != nil {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if ctx.Value(marked{}) != nil {
			h.n.Add(1)
		}
		return next(ctx, cmds)
	}
}

// TestWindowCostsNoRoundTrip: once a product is cached, a purchase before its start or after
// its end, of every production strategy, sends nothing to PostgreSQL (through gorm) or Redis;
// a control purchase on sale is seen by the counters.
func TestWindowCostsNoRoundTrip(t *testing.T) {
	var pg, rd atomic.Int64
	count := func(db *gorm.DB) {
		if ctx := db.Statement.Context; ctx != nil && ctx.Value(marked{}) != nil {
			pg.Add(1)
		}
	}
	// The callbacks go in before the app starts: its background work uses the pool, and gorm's
	// registration is not safe beside it.
	gdb := testenv.Postgres(t)
	cb := gdb.Callback()
	for i, err := range []error{cb.Query().Register("window:count", count), cb.Raw().Register("window:count", count),
		cb.Row().Register("window:count", count), cb.Create().Register("window:count", count),
		cb.Update().Register("window:count", count), cb.Delete().Register("window:count", count)} {
		if err != nil {
			t.Fatalf("register callback %d: %v", i, err)
		}
	}
	rdb, prefix := testenv.Redis(t)
	rdb.AddHook(countHook{&rd})
	a := app.New(app.Config{Plug: teaching, DB: gdb, Redis: rdb, RedisPrefix: prefix})
	t.Cleanup(func() { a.Close() })
	e := &env{db: gdb, rdb: rdb, prefix: prefix, app: a, store: labStore(gdb)}
	later, past := time.Now().Add(time.Hour), time.Now().Add(-time.Hour)
	ctx := context.WithValue(context.Background(), marked{}, true)
	for _, s := range inventory.Strategies {
		for _, np := range []inventory.NewProduct{
			{Name: "later", Stock: 5, Strategy: s, StartsAt: &later},
			{Name: "ended", Stock: 5, Strategy: s, EndsAt: &past},
		} {
			p, err := e.store.Create(context.Background(), np)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.app.Orders.Purchase(context.Background(), p.ID, 1); err == nil { // caches the product
				t.Fatalf("%s %s: bought outside the window", s, np.Name)
			}
			pg.Store(0)
			rd.Store(0)
			for user := int64(1); user <= 20; user++ {
				_, err := e.app.Orders.Purchase(ctx, p.ID, user)
				if !errors.Is(err, inventory.ErrNotStarted) && !errors.Is(err, inventory.ErrEnded) {
					t.Fatalf("%s %s: %v, want outside the window", s, np.Name, err)
				}
			}
			if pg.Load() != 0 || rd.Load() != 0 {
				t.Errorf("%s %s: 20 purchases sent %d statements to PostgreSQL and %d to Redis, want none", s, np.Name, pg.Load(), rd.Load())
			}
		}
	}
	// The control: a purchase on sale is counted, so the counters see what they should.
	p := e.product(t, 5, inventory.StrategyRedis, 0)
	if _, err := e.app.Orders.Purchase(ctx, p.ID, 1); err != nil {
		t.Fatal(err)
	}
	if rd.Load() == 0 {
		t.Error("the control purchase sent nothing to Redis that the hook saw: the counters are blind")
	}
}

// TestRetryAfterTheEnd: a buyer who bought before the end and retries after it is answered
// already purchased with its order, for every production strategy, within the time a purchase
// may still commit (an index probe) and after it (the buyers read once); a buyer without an
// order is told the sale ended.
func TestRetryAfterTheEnd(t *testing.T) {
	e := newEnv(t, order.Config{})
	ctx := context.Background()
	check := func(what string, id int64, want order.Order) {
		t.Helper()
		_, err := e.app.Orders.Purchase(ctx, id, want.UserID)
		var had *order.PurchasedError
		if !errors.As(err, &had) || had.Order.ID != want.ID {
			t.Errorf("%s: user %d retries after the end: %v, want already purchased, order %d", what, want.UserID, err, want.ID)
		}
		if _, err := e.app.Orders.Purchase(ctx, id, 99); !errors.Is(err, inventory.ErrEnded) {
			t.Errorf("%s: a new buyer after the end: %v, want ended", what, err)
		}
	}
	for _, s := range inventory.Strategies {
		end := time.Now().Add(1500 * time.Millisecond)
		p, err := e.store.Create(ctx, inventory.NewProduct{Name: "ends", Stock: 5, Strategy: s, EndsAt: &end})
		if err != nil {
			t.Fatal(err)
		}
		o := buy(t, e.app.Orders, p.ID, 1)
		time.Sleep(time.Until(end))
		check(string(s)+", just ended", p.ID, o)
	}
	past := time.Now().Add(-time.Hour)
	p, err := e.store.Create(ctx, inventory.NewProduct{Name: "ended", Stock: 5, Strategy: inventory.StrategyPessimistic, EndsAt: &past})
	if err != nil {
		t.Fatal(err)
	}
	writeOrders(t, e.db, p.ID, 1, 3)
	o, err := e.app.Orders.OrderOf(ctx, p.ID, 2)
	if err != nil {
		t.Fatal(err)
	}
	check("ended an hour ago", p.ID, o)
}
