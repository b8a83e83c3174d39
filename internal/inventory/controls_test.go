package inventory_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// TestMetaLeaseAndOutage: a Store trusts its copy of a product for its lease and reads it again
// after (a pause made through another Store arrives then, not before); when PostgreSQL cannot be
// read as a lease runs out, it keeps its copy rather than fail a purchase, and a product it never
// read is an error, not ErrNotFound.
func TestMetaLeaseAndOutage(t *testing.T) {
	dsn := testenv.Schema(t)
	ctx := context.Background()
	writer := inventory.NewStore(testenv.DB(t, dsn))
	p, err := writer.Create(ctx, inventory.NewProduct{Name: "p", Stock: 1})
	if err != nil {
		t.Fatal(err)
	}
	pool, err := db.Open(dsn, db.PoolOptions{MaxOpen: 2})
	if err != nil {
		t.Fatal(err)
	}
	reader := inventory.NewStore(pool)
	const lease = 200 * time.Millisecond
	reader.SetControlLease(lease)
	if got, err := reader.Meta(ctx, p.ID); err != nil || got.PausedAt != nil {
		t.Fatalf("Meta = %+v, %v", got, err)
	}
	if _, err := writer.Pause(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if got, _ := reader.Meta(ctx, p.ID); got.PausedAt != nil {
		t.Fatal("the copy read a moment ago was read again within its lease")
	}
	time.Sleep(lease)
	if got, err := reader.Meta(ctx, p.ID); err != nil || got.PausedAt == nil {
		t.Fatalf("after the lease: Meta = %+v, %v; want the pause", got, err)
	}
	if _, err := writer.Resume(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := pool.DB()
	sqlDB.Close() // PostgreSQL cannot be read any more by reader
	time.Sleep(lease)
	if got, err := reader.Meta(ctx, p.ID); err != nil || got.PausedAt == nil {
		t.Fatalf("PostgreSQL unreadable: Meta = %+v, %v; want the last copy, paused", got, err)
	}
	if _, err := reader.Meta(ctx, p.ID+1); err == nil || errors.Is(err, inventory.ErrNotFound) {
		t.Fatalf("a product never read, PostgreSQL unreadable: %v, want an error other than ErrNotFound", err)
	}
}
