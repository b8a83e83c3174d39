package inventory_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// countQueries counts the statements gdb sends from now on (gorm's query and row callbacks,
// which every read of the Store goes through).
func countQueries(t *testing.T, gdb *gorm.DB) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	count := func(*gorm.DB) { n.Add(1) }
	if err := gdb.Callback().Query().Before("gorm:query").Register("test:count", count); err != nil {
		t.Fatal(err)
	}
	if err := gdb.Callback().Row().Before("gorm:row").Register("test:count", count); err != nil {
		t.Fatal(err)
	}
	return &n
}

// TestNotFoundRemembered: a second lookup of an unknown id costs no PostgreSQL query; a
// product created under that id right after is found at once by the Store that created it,
// and by another Store (another process) once NotFoundTTL has passed since its creation.
func TestNotFoundRemembered(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	ctx := context.Background()
	var next int64 // the id the next product gets
	if err := gdb.Raw(`SELECT last_value + CASE WHEN is_called THEN 1 ELSE 0 END FROM products_id_seq`).Scan(&next).Error; err != nil {
		t.Fatal(err)
	}
	queries := countQueries(t, gdb)
	creator, other := inventory.NewStore(gdb), inventory.NewStore(gdb)
	for _, s := range []*inventory.Store{creator, other} {
		if _, err := s.Meta(ctx, next); !errors.Is(err, inventory.ErrNotFound) {
			t.Fatalf("lookup of an unknown id = %v, want ErrNotFound", err)
		}
	}
	before := queries.Load()
	if _, err := creator.Meta(ctx, next); !errors.Is(err, inventory.ErrNotFound) {
		t.Fatalf("second lookup = %v, want ErrNotFound", err)
	}
	if _, err := creator.Get(ctx, next); !errors.Is(err, inventory.ErrNotFound) {
		t.Fatalf("second read = %v, want ErrNotFound", err)
	}
	if got := queries.Load() - before; got != 0 {
		t.Fatalf("the second and third lookups of an unknown id sent %d queries, want 0", got)
	}

	p, err := creator.Create(ctx, inventory.NewProduct{Name: "late", Stock: 1})
	if err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	if p.ID != next {
		t.Fatalf("created product %d, want id %d", p.ID, next)
	}
	if _, err := creator.Meta(ctx, p.ID); err != nil {
		t.Fatalf("the creator's lookup right after creating it = %v", err)
	}
	time.Sleep(time.Until(created.Add(inventory.NotFoundTTL)))
	if _, err := other.Meta(ctx, p.ID); err != nil {
		t.Fatalf("another Store's lookup %v after the creation = %v", inventory.NotFoundTTL, err)
	}
}
