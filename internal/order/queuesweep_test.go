package order_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// tickKey marks the context of the calls a test counts.
type tickKey struct{}

// redisCounter is a go-redis hook counting the commands and round trips of the calls whose
// context carries tickKey.
type redisCounter struct{ cmds, trips atomic.Int64 }

func (c *redisCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *redisCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if ctx.Value(tickKey{}) != nil && !connSetup(cmd) {
			c.cmds.Add(1)
			c.trips.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (c *redisCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if ctx.Value(tickKey{}) != nil && !connSetup(cmds[0]) {
			c.cmds.Add(int64(len(cmds)))
			c.trips.Add(1)
		}
		return next(ctx, cmds)
	}
}

// connSetup reports whether cmd is one go-redis sends to set a new connection up.
func connSetup(cmd redis.Cmder) bool { return cmd.Name() == "hello" || cmd.Name() == "client" }

// TestStartQueuesIgnoresHistory: a process's periodic look for queue backlogs (StartQueues)
// costs the same with 500 old queue products nobody buys as with none: no PostgreSQL query
// and a few Redis round trips, counted through a gorm callback and a go-redis hook; and the
// backlog a dead process left (two purchases it queued and read, never acknowledged) is still
// written by this process, which no buyer of the product reaches. A product whose stream has
// been empty for QueueGrace leaves the registry.
func TestStartQueuesIgnoresHistory(t *testing.T) {
	t.Parallel()
	dsn := testenv.Schema(t)
	gdb := testenv.DB(t, dsn)
	rdb, prefix := testenv.Redis(t)
	keys := inventory.Keys{Prefix: prefix}
	ctx := context.Background()
	mustExec(t, gdb, `INSERT INTO products (name, stock, initial_stock, strategy)
		SELECT 'old', 5, 5, 'queue' FROM generate_series(1, 500)`)
	store := inventory.NewStore(gdb)
	p, err := store.Create(ctx, inventory.NewProduct{Name: "backlog", Stock: 5, Strategy: inventory.StrategyQueue})
	if err != nil {
		t.Fatal(err)
	}

	// The process that dies: it queues two purchases, its consumer reads them, and it is gone.
	dead := inventory.NewQueue(rdb, keys)
	if _, err := inventory.NewGate(rdb, keys).StartSeeding(p.ID).Publish(ctx, inventory.SeedInit, 5); err != nil {
		t.Fatal(err)
	}
	for _, u := range []int64{1, 2} {
		if _, err := dead.Enqueue(ctx, p.ID, u); err != nil {
			t.Fatal(err)
		}
	}
	if err := dead.EnsureGroup(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if got, err := dead.Read(ctx, p.ID, "killed", 10, 0); err != nil || len(got) != 2 {
		t.Fatalf("read by the consumer to be killed = %v, %v", got, err)
	}
	// A product sold out long ago: in the registry, marked before QueueGrace, stream empty.
	if err := rdb.ZAdd(ctx, keys.QueueActive(), redis.Z{Score: 1, Member: 999_999}).Err(); err != nil {
		t.Fatal(err)
	}

	// This process, on a pool and a Redis client of its own whose calls are counted.
	var queries atomic.Int64
	measured := testenv.DB(t, dsn)
	count := func(db *gorm.DB) {
		if db.Statement.Context.Value(tickKey{}) != nil {
			queries.Add(1)
		}
	}
	if err := measured.Callback().Query().Before("gorm:query").Register("test:count", count); err != nil {
		t.Fatal(err)
	}
	if err := measured.Callback().Row().Before("gorm:row").Register("test:count", count); err != nil {
		t.Fatal(err)
	}
	counted := redis.NewClient(&redis.Options{Addr: testenv.RedisAddr(t)})
	t.Cleanup(func() { counted.Close() })
	var calls redisCounter
	counted.AddHook(&calls)
	locks := dlock.New(counted, nil)
	t.Cleanup(func() { locks.Close() })
	store = inventory.NewStore(measured)
	s := order.NewService(order.Deps{Products: store, Locks: locks,
		Gate: inventory.NewGate(counted, keys), Queue: inventory.NewQueue(counted, keys),
		SoldOut: inventory.NewSoldOut(counted, store, keys, slog.New(slog.DiscardHandler), inventory.SoldOutOptions{}), Keys: keys},
		order.Config{QueueClaimIdle: 300 * time.Millisecond})
	t.Cleanup(s.Close)

	tick := context.WithValue(ctx, tickKey{}, true)
	if err := s.StartQueues(tick); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int64
		if err := gdb.Raw(`SELECT count(*) FROM orders WHERE product_id = ?`, p.ID).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dead process's backlog: %d of 2 orders written after 10s", n)
		}
	}
	if err := rdb.ZScore(ctx, keys.QueueActive(), "999999").Err(); err != redis.Nil {
		t.Errorf("a product idle for longer than QueueGrace is still in the registry (%v)", err)
	}

	queries.Store(0)
	calls.cmds.Store(0)
	calls.trips.Store(0)
	if err := s.StartQueues(tick); err != nil {
		t.Fatal(err)
	}
	t.Logf("one tick with 501 queue products, one of them sold lately: %d PostgreSQL queries, %d Redis commands in %d round trips",
		queries.Load(), calls.cmds.Load(), calls.trips.Load())
	if q, trips := queries.Load(), calls.trips.Load(); q != 0 || trips > 3 {
		t.Fatalf("one tick sent %d PostgreSQL queries and %d Redis round trips, want 0 and at most 3", q, trips)
	}
}
