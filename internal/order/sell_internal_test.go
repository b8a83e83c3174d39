package order

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// TestSellStatement drives sell.sql directly: fencing (an equal fence is another grant's and
// writes nothing), arrival order, repeats, sell-out.
func TestSellStatement(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	rdb, prefix := testenv.Redis(t)
	store := inventory.NewStore(gdb)
	keys := inventory.Keys{Prefix: prefix}
	var logged strings.Builder
	s := NewService(Deps{Products: store, SoldOut: inventory.NewSoldOut(rdb, store, keys, slog.New(slog.DiscardHandler), inventory.SoldOutOptions{}), Keys: keys,
		Logger: slog.New(slog.NewTextHandler(&logged, nil))}, Config{})
	ctx := context.Background()
	p, err := store.Create(ctx, inventory.NewProduct{Name: "p", Stock: 3})
	if err != nil {
		t.Fatal(err)
	}
	outcomes := func(rs []result) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			out[i] = Outcome(r.err)
		}
		return out
	}
	steps := []struct {
		name    string
		fence   int64
		users   []int64
		want    []string
		left    int
		wantErr error
	}{
		{"two buyers, one twice", 10, []int64{1, 2, 1}, []string{"bought", "bought", "already_purchased"}, 1, nil},
		{"stale fence writes nothing", 9, []int64{3}, nil, 0, inventory.ErrFenced},
		{"the same fence again writes nothing", 10, []int64{3}, nil, 0, inventory.ErrFenced},
		{"straddles the sell-out", 11, []int64{2, 3, 4}, []string{"already_purchased", "bought", "sold_out"}, 0, nil},
		{"sold out", 12, []int64{5}, []string{"sold_out"}, 0, nil},
	}
	for _, st := range steps {
		rs, left, err := s.locked.writeBatch(ctx, p, st.users, nil, st.fence)
		if !errors.Is(err, st.wantErr) {
			t.Fatalf("%s: err = %v, want %v", st.name, err, st.wantErr)
		}
		if err != nil {
			// A refused write is logged, with both fences: a product that kept refusing
			// (fences fallen behind the row's) would otherwise stall in silence.
			if stored, ok := inventory.StoredFence(err); !ok || stored != 10 {
				t.Errorf("%s: the error names the product's fence %d (%v), want 10", st.name, stored, ok)
			}
			if want := "product_fence=10"; !strings.Contains(logged.String(), "write refused") ||
				!strings.Contains(logged.String(), want) {
				t.Errorf("%s: logged %q, want a warning with %s", st.name, logged.String(), want)
			}
			continue
		}
		if got := outcomes(rs); left != st.left || !slices.Equal(got, st.want) {
			t.Fatalf("%s: %v left %d, want %v left %d", st.name, got, left, st.want, st.left)
		}
	}
	var orders int64
	gdb.Raw("SELECT count(*) FROM orders WHERE product_id = ?", p.ID).Scan(&orders)
	if orders != 3 {
		t.Fatalf("orders = %d, want 3", orders)
	}
}
