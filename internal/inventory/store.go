package inventory

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// Store reads and creates products. It is safe for concurrent use.
type Store struct {
	db *gorm.DB
	// meta caches products by id: a purchase needs them before anything else. Their changeable
	// fields (paused_at, ends_at, initial_stock: the merchant's controls) are trusted for a
	// lease (see leases, ControlLease).
	meta   sync.Map // int64 -> Product
	leases leases
	// notFound remembers for NotFoundTTL the ids PostgreSQL had no product of, so that
	// unknown ids cost one round trip per NotFoundTTL, not one per request.
	notFound notFound
	// announce, if set (NewCreations), tells the other processes of a product created here.
	announce func(ctx context.Context, id int64)
	// plugged checks the products of the strategies plugged in from outside (Plug), by name.
	plugged map[Strategy]func(NewProduct) error
	think   bool // AllowThink: products may have think_ms
}

// NewStore returns a Store on db.
func NewStore(db *gorm.DB) *Store { return &Store{db: db} }

// DB returns the store's database handle, for services that open transactions.
func (s *Store) DB() *gorm.DB { return s.db }

// Plug makes Create accept strategy, vetted by check if not nil. Call it before use.
func (s *Store) Plug(strategy Strategy, check func(NewProduct) error) {
	if s.plugged == nil {
		s.plugged = map[Strategy]func(NewProduct) error{}
	}
	if check == nil {
		check = func(np NewProduct) error {
			if np.LabLock != "" || np.LeaseMS != 0 {
				return fmt.Errorf("lock and lease_ms are not for strategy %s", np.Strategy)
			}
			return nil
		}
	}
	s.plugged[strategy] = check
}

// AllowThink makes Create accept think_ms above 0. Call it before use.
func (s *Store) AllowThink() { s.think = true }

// Create validates and inserts np; an invalid one is ErrInvalid.
func (s *Store) Create(ctx context.Context, np NewProduct) (Product, error) {
	if err := s.validate(&np); err != nil {
		return Product{}, err
	}
	var p Product
	err := s.db.WithContext(ctx).Raw(`INSERT INTO products (name, stock, initial_stock, strategy, think_ms, lab_lock, lease_ms, fair,
		pay_within_ms, starts_at, ends_at, line_rate, line_window_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
		np.Name, np.Stock, np.Stock, np.Strategy, np.ThinkMS, np.LabLock, np.LeaseMS, np.Fair, np.PayWithinMS, np.StartsAt, np.EndsAt,
		np.Line.rate(), np.Line.windowMS()).Scan(&p).Error
	if err != nil {
		return Product{}, fmt.Errorf("create product: %w", err)
	}
	s.notFound.created(p.ID)
	if s.announce != nil {
		s.announce(ctx, p.ID)
	}
	return p, nil
}

// validate checks np as Validate does, or with its plugged strategy's check (see Plug).
func (s *Store) validate(np *NewProduct) error {
	if np.ThinkMS > 0 && !s.think {
		return fmt.Errorf("%w: think_ms is a teaching pause of the lab build of the API (go build -tags lab ./cmd/api); this one takes none", ErrInvalid)
	}
	check, plugged := s.plugged[np.Strategy]
	if !plugged {
		return np.Validate()
	}
	if err := np.validateCommon(); err != nil {
		return err
	}
	if err := check(*np); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

// Get reads the product, or returns ErrNotFound (cached for NotFoundTTL).
func (s *Store) Get(ctx context.Context, id int64) (Product, error) {
	if s.notFound.has(id, time.Now()) {
		return Product{}, fmt.Errorf("product %d: %w", id, ErrNotFound)
	}
	gen := s.notFound.generation()
	start := time.Now()
	var p Product
	err := s.db.WithContext(ctx).Take(&p, id).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		s.notFound.add(id, gen, time.Now())
		return Product{}, fmt.Errorf("product %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return Product{}, fmt.Errorf("get product %d: %w", id, err)
	}
	s.remember(p, start)
	return p, nil
}

// Meta returns the product from a cache, or ErrNotFound; its Stock, Fence and UpdatedAt are
// stale, its controls (paused_at, ends_at) at most ControlLease old.
func (s *Store) Meta(ctx context.Context, id int64) (Product, error) {
	if p, ok := s.cached(id, time.Now()); ok {
		return p, nil
	}
	p, ok := s.meta.Load(id)
	return s.refresh(ctx, id, p, ok)
}

// CountFencedFrom counts the products whose fence is at least fence.
func (s *Store) CountFencedFrom(ctx context.Context, fence int64) (int64, error) {
	var n int64
	if err := s.db.WithContext(ctx).Model(&Product{}).Where("fence >= ?", fence).Count(&n).Error; err != nil {
		return 0, fmt.Errorf("count products fenced from %d: %w", fence, err)
	}
	return n, nil
}

// Stock reads a product's stock in tx; with forUpdate it also locks the row until tx ends.
func Stock(tx *gorm.DB, id int64, forUpdate bool) (int, error) {
	q := tx.Model(&Product{}).Select("stock").Where("id = ?", id)
	if forUpdate {
		q = q.Clauses(clause.Locking{Strength: clause.LockingStrengthUpdate})
	}
	var stock []int
	if err := q.Scan(&stock).Error; err != nil {
		return 0, fmt.Errorf("read stock of product %d: %w", id, err)
	}
	if len(stock) == 0 {
		return 0, fmt.Errorf("product %d: %w", id, ErrNotFound)
	}
	return stock[0], nil
}

// Decrement takes n units in tx and returns the stock left, or ErrSoldOut if fewer are left.
func Decrement(tx *gorm.DB, id int64, n int) (int, error) {
	var left []int
	err := tx.Raw(`UPDATE products SET stock = stock - ?, updated_at = now()
		WHERE id = ? AND stock >= ? RETURNING stock`, n, id, n).Scan(&left).Error
	if err != nil {
		return 0, fmt.Errorf("decrement product %d: %w", id, err)
	}
	if len(left) == 0 {
		return 0, fmt.Errorf("product %d: %w", id, ErrSoldOut)
	}
	return left[0], nil
}

// DecrementFenced is Decrement that records fence if it is above the row's; otherwise it
// returns a *StaleFenceError.
func DecrementFenced(tx *gorm.DB, id int64, n int, fence int64) (int, error) {
	var left []int
	err := tx.Raw(`UPDATE products SET stock = stock - ?, fence = ?, updated_at = now()
		WHERE id = ? AND stock >= ? AND `+FenceAdmits+` RETURNING stock`, n, fence, id, n, fence, fence).Scan(&left).Error
	if err != nil {
		return 0, fmt.Errorf("decrement product %d: %w", id, err)
	}
	if len(left) == 1 {
		return left[0], nil
	}
	return 0, WhyNotWritten(tx, id, fence)
}

// WhyNotWritten returns why a fenced write changed nothing: ErrNotFound, *StaleFenceError, ErrSoldOut.
func WhyNotWritten(tx *gorm.DB, id int64, fence int64) error {
	var rows []Product
	if err := tx.Select("stock", "fence").Where("id = ?", id).Find(&rows).Error; err != nil {
		return fmt.Errorf("read product %d: %w", id, err)
	}
	switch {
	case len(rows) == 0:
		return fmt.Errorf("product %d: %w", id, ErrNotFound)
	case fence != 0 && rows[0].Fence >= fence, fence == 0 && rows[0].Fence != 0:
		return &StaleFenceError{Product: id, Fence: fence, Stored: rows[0].Fence}
	default:
		return fmt.Errorf("product %d: %w", id, ErrSoldOut)
	}
}

// SetStock overwrites a product's stock unconditionally.
func SetStock(tx *gorm.DB, id int64, stock int) error {
	err := tx.Exec(`UPDATE products SET stock = ?, updated_at = now() WHERE id = ?`, stock, id).Error
	if err != nil {
		return fmt.Errorf("set stock of product %d: %w", id, err)
	}
	return nil
}
