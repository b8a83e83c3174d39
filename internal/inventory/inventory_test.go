package inventory_test

import (
	"context"
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/lab"
	"github.com/seckill/seckill/internal/testenv"
)

func TestValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		np   inventory.NewProduct
		ok   bool
	}{
		{"default strategy", inventory.NewProduct{Name: "a", Stock: 1}, true},
		{"zero stock", inventory.NewProduct{Name: "a", Stock: 0, Strategy: "naive"}, true},
		{"no name", inventory.NewProduct{Stock: 1}, false},
		{"bad utf-8", inventory.NewProduct{Name: "\xff", Stock: 1}, false},
		{"negative stock", inventory.NewProduct{Name: "a", Stock: -1}, false},
		{"too much stock", inventory.NewProduct{Name: "a", Stock: inventory.MaxStock + 1}, false},
		{"unknown strategy", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "x"}, false},
		{"think too long", inventory.NewProduct{Name: "a", Stock: 1, ThinkMS: inventory.MaxThinkMS + 1}, false},
		{"fair dlock", inventory.NewProduct{Name: "a", Stock: 1, Fair: true}, true},
		{"fair naive", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "naive", Fair: true}, false},
		{"lab with a lock", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "lab", LabLock: "lease", LeaseMS: 200}, true},
		{"lab with the etcd lock", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "lab", LabLock: "etcd", LeaseMS: 2000}, true},
		{"lab without a lock", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "lab"}, false},
		{"lab, negative lease", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "lab", LabLock: "lease", LeaseMS: -1}, false},
		{"a lock without lab", inventory.NewProduct{Name: "a", Stock: 1, LabLock: "dlock"}, false},
		{"a lease without lab", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "naive", LeaseMS: 100}, false},
	}
	for _, tt := range tests {
		err := tt.np.Validate()
		if got := err == nil; got != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, inventory.ErrInvalid) {
			t.Errorf("%s: error %v is not ErrInvalid", tt.name, err)
		}
	}
}

// TestCreateChecksLab: a lab product's lock and lease are checked by the lab's rules
// (lab.Check, which the Store is given), which this package does not know: an unknown lock
// and a lease out of bounds are refused as invalid, a known one is created; a Store that was
// given no rules refuses every lab product.
func TestCreateChecksLab(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	ctx := context.Background()
	s := inventory.NewStore(gdb)
	s.CheckLab(lab.Check)
	for _, tt := range []struct {
		name string
		np   inventory.NewProduct
		ok   bool
	}{
		{"lab with a lock", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "lab", LabLock: "lease", LeaseMS: 200}, true},
		{"lab with the etcd lock", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "lab", LabLock: "etcd", LeaseMS: 2000}, true},
		{"lab, unknown lock", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "lab", LabLock: "spin"}, false},
		{"lab, lease too short", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "lab", LabLock: "lease", LeaseMS: 5}, false},
	} {
		_, err := s.Create(ctx, tt.np)
		if got := err == nil; got != tt.ok {
			t.Errorf("%s: Create() = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, inventory.ErrInvalid) {
			t.Errorf("%s: error %v is not ErrInvalid", tt.name, err)
		}
	}
	_, err := inventory.NewStore(gdb).Create(ctx, inventory.NewProduct{Name: "a", Stock: 1, Strategy: "lab", LabLock: "lease"})
	if !errors.Is(err, inventory.ErrInvalid) {
		t.Errorf("a lab product in a Store without lab rules: Create() = %v, want ErrInvalid", err)
	}
}

func TestDecrement(t *testing.T) {
	t.Parallel()
	p, s, tx := createProduct(t, inventory.NewProduct{Name: "p", Stock: 3})
	if p.ID == 0 || p.Stock != 3 || p.InitialStock != 3 || p.Strategy != inventory.StrategyDlock || p.CreatedAt.IsZero() {
		t.Fatalf("created %+v", p)
	}
	steps := []struct {
		name    string
		do      func(*gorm.DB) (int, error)
		left    int
		wantErr error
	}{
		{"take 2", func(tx *gorm.DB) (int, error) { return inventory.Decrement(tx, p.ID, 2) }, 1, nil},
		{"take 2 of 1", func(tx *gorm.DB) (int, error) { return inventory.Decrement(tx, p.ID, 2) }, 0, inventory.ErrSoldOut},
		{"fence 10", func(tx *gorm.DB) (int, error) { return inventory.DecrementFenced(tx, p.ID, 0, 10) }, 1, nil},
		// An equal fence is another grant's (a grant writes once): refused, as a smaller one.
		{"fence 10 again", func(tx *gorm.DB) (int, error) { return inventory.DecrementFenced(tx, p.ID, 0, 10) }, 0, inventory.ErrFenced},
		{"no fence on a fenced row", func(tx *gorm.DB) (int, error) { return inventory.DecrementFenced(tx, p.ID, 0, 0) }, 0, inventory.ErrFenced},
		{"fence 9", func(tx *gorm.DB) (int, error) { return inventory.DecrementFenced(tx, p.ID, 1, 9) }, 0, inventory.ErrFenced},
		{"fence 11", func(tx *gorm.DB) (int, error) { return inventory.DecrementFenced(tx, p.ID, 1, 11) }, 0, nil},
		{"fence 12 sold out", func(tx *gorm.DB) (int, error) { return inventory.DecrementFenced(tx, p.ID, 1, 12) }, 0, inventory.ErrSoldOut},
		{"unknown product", func(tx *gorm.DB) (int, error) { return inventory.DecrementFenced(tx, p.ID+1000, 1, 12) }, 0, inventory.ErrNotFound},
	}
	for _, st := range steps {
		left, err := st.do(tx)
		if !errors.Is(err, st.wantErr) || (err == nil && left != st.left) {
			t.Fatalf("%s = %d, %v; want %d, %v", st.name, left, err, st.left, st.wantErr)
		}
		if stored, ok := inventory.StoredFence(err); ok != errors.Is(err, inventory.ErrFenced) || ok && stored != 10 {
			t.Fatalf("%s: StoredFence = %d, %v; want the row's 10 for a fence refused", st.name, stored, ok)
		}
	}
	if _, err := s.Get(context.Background(), p.ID+1000); !errors.Is(err, inventory.ErrNotFound) {
		t.Fatalf("Get unknown = %v", err)
	}
}

func TestKeysShareHashSlot(t *testing.T) {
	t.Parallel()
	k := inventory.Keys{Prefix: "seckill"}
	for _, key := range []string{k.Lock(42), k.GateStock(42), k.GateBuyers(42)} {
		if want := "seckill:{p:42}:"; key[:len(want)] != want {
			t.Errorf("key %q does not carry the hash tag {p:42}", key)
		}
	}
}

// TestClaimStockFences: a lab holder with a fence records it when it reads, so an older
// holder that read before can no longer write, and its write is ErrFenced; without a fence,
// the write is the plain lost update the lab shows.
func TestClaimStockFences(t *testing.T) {
	t.Parallel()
	p, _, tx := createProduct(t, inventory.NewProduct{Name: "lab", Stock: 5, Strategy: inventory.StrategyLab, LabLock: "dlock"})
	old, err := inventory.ClaimStock(tx, p.ID, 1) // the older holder reads, then is paused
	if err != nil || old != 5 {
		t.Fatalf("ClaimStock(fence 1) = %d, %v", old, err)
	}
	now, err := inventory.ClaimStock(tx, p.ID, 2) // its lease ran out: a newer holder reads
	if err != nil || now != 5 {
		t.Fatalf("ClaimStock(fence 2) = %d, %v", now, err)
	}
	if _, err := inventory.SwapStockFenced(tx, p.ID, old-1, 1); !errors.Is(err, inventory.ErrFenced) {
		t.Errorf("the older holder's write = %v, want ErrFenced", err)
	}
	if _, err := inventory.ClaimStock(tx, p.ID, 1); !errors.Is(err, inventory.ErrFenced) {
		t.Errorf("the older holder's read = %v, want ErrFenced", err)
	}
	if _, err := inventory.SwapStockFenced(tx, p.ID, now-1, 2); err != nil {
		t.Errorf("the newer holder's write = %v", err)
	}
	if _, err := inventory.SwapStockFenced(tx, p.ID, old-1, 0); err != nil { // unfenced: lands whatever happened
		t.Errorf("an unfenced write = %v", err)
	}
	if got, _ := inventory.Stock(tx, p.ID, false); got != 4 {
		t.Errorf("stock %d, want 4", got)
	}
}
