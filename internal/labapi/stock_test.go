package labapi

import (
	"context"
	"errors"
	"testing"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// TestClaimStockFences: a lab holder with a fence records it when it reads, so an older
// holder that read before can no longer write, and its write is ErrFenced; without a fence,
// the write is the plain lost update the lab shows.
func TestClaimStockFences(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	s := inventory.NewStore(gdb)
	s.Plug(Lab, checkLab)
	ctx := context.Background()
	p, err := s.Create(ctx, inventory.NewProduct{Name: "lab", Stock: 5, Strategy: Lab, LabLock: "dlock"})
	if err != nil {
		t.Fatal(err)
	}
	tx := gdb.WithContext(ctx)
	old, err := claimStock(tx, p.ID, 1) // the older holder reads, then is paused
	if err != nil || old != 5 {
		t.Fatalf("claimStock(fence 1) = %d, %v", old, err)
	}
	now, err := claimStock(tx, p.ID, 2) // its lease ran out: a newer holder reads
	if err != nil || now != 5 {
		t.Fatalf("claimStock(fence 2) = %d, %v", now, err)
	}
	if _, err := swapStock(tx, p.ID, old-1, 1); !errors.Is(err, inventory.ErrFenced) {
		t.Errorf("the older holder's write = %v, want ErrFenced", err)
	}
	if _, err := claimStock(tx, p.ID, 1); !errors.Is(err, inventory.ErrFenced) {
		t.Errorf("the older holder's read = %v, want ErrFenced", err)
	}
	if _, err := swapStock(tx, p.ID, now-1, 2); err != nil {
		t.Errorf("the newer holder's write = %v", err)
	}
	if _, err := swapStock(tx, p.ID, old-1, 0); err != nil { // unfenced: lands whatever happened
		t.Errorf("an unfenced write = %v", err)
	}
	if got, _ := inventory.Stock(tx, p.ID, false); got != 4 {
		t.Errorf("stock %d, want 4", got)
	}
}
