package inventory_test

import (
	"context"
	"errors"
	"testing"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
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
		{"zero stock", inventory.NewProduct{Name: "a", Stock: 0, Strategy: "pessimistic"}, true},
		{"no name", inventory.NewProduct{Stock: 1}, false},
		{"bad utf-8", inventory.NewProduct{Name: "\xff", Stock: 1}, false},
		{"negative stock", inventory.NewProduct{Name: "a", Stock: -1}, false},
		{"too much stock", inventory.NewProduct{Name: "a", Stock: inventory.MaxStock + 1}, false},
		{"unknown strategy", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "x"}, false},
		{"think too long", inventory.NewProduct{Name: "a", Stock: 1, ThinkMS: inventory.MaxThinkMS + 1}, false},
		{"fair dlock", inventory.NewProduct{Name: "a", Stock: 1, Fair: true}, true},
		{"fair optimistic", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "optimistic", Fair: true}, false},
		{"naive, a teaching strategy", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "naive"}, false},
		{"lab, a teaching strategy", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "lab", LabLock: "lease"}, false},
		{"a lock without lab", inventory.NewProduct{Name: "a", Stock: 1, LabLock: "dlock"}, false},
		{"a lease without lab", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "optimistic", LeaseMS: 100}, false},
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

// TestCreatePlugged: a Store accepts products of a strategy that is not a production one only
// once it is plugged in (Plug), checked by the check it was given, which this package does not
// know; an unknown strategy is refused, never sold by a default; think_ms is refused until
// AllowThink.
func TestCreatePlugged(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	ctx := context.Background()
	lab := inventory.NewProduct{Name: "a", Stock: 1, Strategy: "lab", LabLock: "lease", LeaseMS: 200}
	thinks := inventory.NewProduct{Name: "a", Stock: 1, ThinkMS: 5}
	bare := inventory.NewStore(gdb)
	for _, np := range []inventory.NewProduct{lab, thinks, {Name: "a", Stock: 1, Strategy: "x"}} {
		if _, err := bare.Create(ctx, np); !errors.Is(err, inventory.ErrInvalid) {
			t.Errorf("%+v in a Store with nothing plugged: Create() = %v, want ErrInvalid", np, err)
		}
	}
	s := inventory.NewStore(gdb)
	s.Plug("lab", func(np inventory.NewProduct) error {
		if np.LabLock != "lease" || np.LeaseMS < 10 {
			return errors.New("lock must be lease, lease_ms at least 10")
		}
		return nil
	})
	s.Plug("naive", nil)
	s.AllowThink()
	for _, tt := range []struct {
		name string
		np   inventory.NewProduct
		ok   bool
	}{
		{"lab with a lock", lab, true},
		{"think_ms", thinks, true},
		{"naive", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "naive", ThinkMS: 5}, true},
		{"naive with a lock", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "naive", LabLock: "lease"}, false},
		{"lab, unknown lock", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "lab", LabLock: "spin"}, false},
		{"lab, lease too short", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "lab", LabLock: "lease", LeaseMS: 5}, false},
		{"lab, a payment window", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "lab", LabLock: "lease", LeaseMS: 200, PayWithinMS: 1000}, false},
		{"unknown strategy", inventory.NewProduct{Name: "a", Stock: 1, Strategy: "x"}, false},
	} {
		_, err := s.Create(ctx, tt.np)
		if got := err == nil; got != tt.ok {
			t.Errorf("%s: Create() = %v, want ok %v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, inventory.ErrInvalid) {
			t.Errorf("%s: error %v is not ErrInvalid", tt.name, err)
		}
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
