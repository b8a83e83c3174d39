package inventory_test

import (
	"errors"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// TestOnSale: a product is on sale from its StartsAt, included, until its EndsAt, excluded;
// before, the error carries the start and the wait.
func TestOnSale(t *testing.T) {
	start := time.Date(2026, 12, 24, 20, 0, 0, 0, time.UTC)
	end := start.Add(time.Hour)
	p := inventory.Product{ID: 7, StartsAt: &start, EndsAt: &end}
	for _, tc := range []struct {
		at   time.Time
		want error
	}{
		{start.Add(-1500 * time.Millisecond), inventory.ErrNotStarted},
		{start, nil},
		{end.Add(-time.Nanosecond), nil},
		{end, inventory.ErrEnded},
	} {
		err := p.OnSale(tc.at)
		if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("OnSale(%v) = %v, want %v", tc.at, err, tc.want)
		}
	}
	var we *inventory.WindowError
	if err := p.OnSale(start.Add(-1500 * time.Millisecond)); !errors.As(err, &we) || !we.At.Equal(start) {
		t.Errorf("before the start: %+v, want a wait until %v", we, start)
	}
	if err := (inventory.Product{}).OnSale(start); err != nil {
		t.Errorf("a product without a window: %v, want on sale", err)
	}
}

// TestNewProductWindow: a window must end after it starts.
func TestNewProductWindow(t *testing.T) {
	start := time.Date(2026, 12, 24, 20, 0, 0, 0, time.UTC)
	for _, end := range []time.Time{start, start.Add(-time.Second)} {
		np := inventory.NewProduct{Name: "w", Stock: 1, StartsAt: &start, EndsAt: &end}
		if err := np.Validate(); !errors.Is(err, inventory.ErrInvalid) {
			t.Errorf("ends %v: %v, want ErrInvalid", end.Sub(start), err)
		}
	}
	end := start.Add(time.Second)
	np := inventory.NewProduct{Name: "w", Stock: 1, StartsAt: &start, EndsAt: &end}
	if err := np.Validate(); err != nil {
		t.Errorf("a valid window: %v", err)
	}
}
