package audit_test

import (
	"context"
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/audit"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// newAuditor returns an Auditor of a schema and a key prefix of the test's own, their Redis
// client and keys, and exec, which runs SQL in that schema.
func newAuditor(t *testing.T) (*audit.Auditor, *redis.Client, inventory.Keys, func(string, ...any)) {
	t.Helper()
	gdb := testenv.Postgres(t)
	rdb, prefix := testenv.Redis(t)
	keys := inventory.Keys{Prefix: prefix}
	sqlDB, _ := gdb.DB()
	exec := func(sql string, args ...any) {
		t.Helper()
		if err := gdb.Exec(sql, args...).Error; err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	return audit.New(sqlDB, rdb, keys), rdb, keys, exec
}

// TestSale: the figures of a sale as PostgreSQL and the gate hold it, for a consistent sale,
// an oversold one with a user who bought twice, and a gate that disagrees.
func TestSale(t *testing.T) {
	t.Parallel()
	a, rdb, keys, exec := newAuditor(t)
	ctx := context.Background()
	exec(`INSERT INTO products (id, name, stock, initial_stock, strategy, fence) VALUES
		(1, 'ok', 1, 3, 'redis', 0), (2, 'bad', 0, 2, 'naive', 7), (3, 'new', 5, 5, 'redis', 0)`)
	exec(`INSERT INTO orders (product_id, user_id) VALUES (1, 10), (1, 11), (2, 20), (2, 21), (2, 22)`)
	exec(`DROP INDEX orders_live_key`) // what a broken lock leaves possible
	exec(`INSERT INTO orders (product_id, user_id) VALUES (2, 20)`)
	rdb.Set(ctx, keys.GateStock(1), 1, 0)
	rdb.SAdd(ctx, keys.GateBuyers(1), 10, 11)

	tests := []struct {
		id   int64
		want audit.Sale
	}{
		{1, audit.Sale{ProductID: 1, InitialStock: 3, Stock: 1, Orders: 2, Sold: 2, Consistent: true,
			Gate: &audit.Gate{Seeded: true, Stock: 1, Buyers: 2, Agrees: true}}},
		{2, audit.Sale{ProductID: 2, InitialStock: 2, Stock: 0, Orders: 4, Sold: 2, Oversold: 2, DuplicateUsers: 1, Fence: 7,
			Gate: &audit.Gate{}}},
		{3, audit.Sale{ProductID: 3, InitialStock: 5, Stock: 5, Consistent: true, Gate: &audit.Gate{Agrees: true}}},
	}
	for _, tt := range tests {
		got, err := a.Sale(ctx, tt.id, true)
		if err != nil {
			t.Fatal(err)
		}
		if got.Gate == nil || *got.Gate != *tt.want.Gate {
			t.Errorf("product %d gate = %+v, want %+v", tt.id, got.Gate, tt.want.Gate)
		}
		got.Gate, tt.want.Gate = nil, nil
		if got != tt.want {
			t.Errorf("product %d = %+v, want %+v", tt.id, got, tt.want)
		}
	}
	rdb.SAdd(ctx, keys.GateBuyers(1), 12) // a buyer the gate counts and PostgreSQL does not have
	if got, _ := a.Sale(ctx, 1, true); got.Gate.Agrees || got.Consistent {
		t.Errorf("a gate with a buyer PostgreSQL lacks = %+v (gate %+v), want disagreement", got, got.Gate)
	}
	if _, err := a.Sale(ctx, 99, true); !errors.Is(err, audit.ErrNoProduct) {
		t.Errorf("a product PostgreSQL lacks: err = %v, want %v", err, audit.ErrNoProduct)
	}
	buyers, err := a.Buyers(ctx, 2)
	if err != nil || len(buyers) != 3 || !buyers[20] || !buyers[22] {
		t.Errorf("buyers of product 2 = %v, %v", buyers, err)
	}
}

// TestSaleQueue: the Redis side of queue products, read in place of the gate: a sale with a
// purchase still queued, an untouched product, and one with a dead-lettered purchase.
func TestSaleQueue(t *testing.T) {
	t.Parallel()
	a, rdb, keys, exec := newAuditor(t)
	ctx := context.Background()
	exec(`INSERT INTO products (id, name, stock, initial_stock, strategy, fence) VALUES
		(1, 'queued', 2, 4, 'queue', 0), (2, 'new', 5, 5, 'queue', 0), (3, 'dead', 1, 2, 'queue', 0)`)
	exec(`INSERT INTO orders (product_id, user_id) VALUES (1, 10), (1, 11), (3, 30)`)
	add := func(stream string, user int64) {
		t.Helper()
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"user", user}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	rdb.Set(ctx, keys.GateStock(1), 1, 0) // 2 in PostgreSQL, less the one queued
	rdb.SAdd(ctx, keys.GateBuyers(1), 10, 11, 12)
	add(keys.QueueStream(1), 12)
	rdb.Set(ctx, keys.GateStock(3), 1, 0)
	rdb.SAdd(ctx, keys.GateBuyers(3), 30)
	add(keys.QueueDead(3), 31)

	tests := []struct {
		id   int64
		want audit.Queue
	}{
		{1, audit.Queue{Seeded: true, Stock: 1, Buyers: 3, Queued: 1, Agrees: true}},
		{2, audit.Queue{Agrees: true}},
		{3, audit.Queue{Seeded: true, Stock: 1, Buyers: 1, Dead: 1}},
	}
	for _, tt := range tests {
		got, err := a.Sale(ctx, tt.id, true)
		if err != nil {
			t.Fatal(err)
		}
		if got.Gate != nil || got.Queue == nil || *got.Queue != tt.want {
			t.Errorf("product %d: gate %+v, queue %+v; want no gate, queue %+v", tt.id, got.Gate, got.Queue, tt.want)
		}
		if got.Consistent != tt.want.Agrees {
			t.Errorf("product %d consistent = %v, want %v", tt.id, got.Consistent, tt.want.Agrees)
		}
	}
	if got, _ := a.Sale(ctx, 1, false); got.Queue != nil || got.Gate != nil {
		t.Errorf("without gate: queue %+v, gate %+v; want neither", got.Queue, got.Gate)
	}
}
