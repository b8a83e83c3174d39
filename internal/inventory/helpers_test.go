package inventory_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// seededGate returns a gate on a Redis key prefix of the test's own, with product 1 seeded
// (SeedInit) with stock units and no buyer, and the Redis client and keys it uses.
func seededGate(t *testing.T, stock int) (*inventory.Gate, *redis.Client, inventory.Keys) {
	t.Helper()
	rdb, prefix := testenv.Redis(t)
	keys := inventory.Keys{Prefix: prefix}
	g := inventory.NewGate(rdb, keys)
	if _, err := g.StartSeeding(1).Publish(context.Background(), inventory.SeedInit, stock); err != nil {
		t.Fatal(err)
	}
	return g, rdb, keys
}

// createProduct creates np in a schema of the test's own and returns the product, its store
// and a handle on the schema to run the package's functions that take a tx.
func createProduct(t *testing.T, np inventory.NewProduct) (inventory.Product, *inventory.Store, *gorm.DB) {
	t.Helper()
	gdb := testenv.Postgres(t)
	s := inventory.NewStore(gdb)
	ctx := context.Background()
	p, err := s.Create(ctx, np)
	if err != nil {
		t.Fatal(err)
	}
	return p, s, gdb.WithContext(ctx)
}
