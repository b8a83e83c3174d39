package order

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
)

// Config tunes the purchase service. The zero value means the documented defaults.
type Config struct {
	// LockTTL is the lease of a product lock; the watchdog renews it while the holder works.
	// Default: 2s.
	LockTTL time.Duration
	// LockWait is how long a buyer waits for a product's lock before the answer is ErrBusy.
	// Default: 1s.
	LockWait time.Duration
	// BatchMax caps how many buyers of one product one lock holder serves in one
	// transaction (dlock strategy). 1 turns batching off. Default: 128.
	BatchMax int
	// BatchLinger is how long a lock holder waits for more buyers to join its batch before
	// writing it. Default: 0, no waiting: batches form from buyers who arrive while the lock
	// is being waited for, and a lone buyer is served at once.
	BatchLinger time.Duration
}

// Observer receives one event per purchase. It must be safe for concurrent use and fast.
type Observer interface {
	Purchased(strategy inventory.Strategy, outcome string, took time.Duration)
	Batch(size int) // the number of buyers one lock holder served at once (dlock strategy)
}

// Deps are the parts a Service coordinates.
type Deps struct {
	Products *inventory.Store
	Locks    *dlock.Client
	Gate     *inventory.Gate
	SoldOut  *inventory.SoldOut
	Keys     inventory.Keys
	Observer Observer     // optional
	Logger   *slog.Logger // optional
}

// Service sells products: one Purchase is one buyer's attempt at one unit. It is safe for
// concurrent use.
type Service struct {
	Deps
	db      *gorm.DB
	cfg     Config
	batches *batcher
}

// NewService returns a Service over d with cfg.
func NewService(d Deps, cfg Config) *Service {
	if cfg.LockTTL <= 0 {
		cfg.LockTTL = 2 * time.Second
	}
	if cfg.LockWait <= 0 {
		cfg.LockWait = time.Second
	}
	if cfg.BatchMax <= 0 {
		cfg.BatchMax = 128
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{Deps: d, db: d.Products.DB(), cfg: cfg, batches: newBatcher(cfg.BatchMax)}
}

// Purchase sells one unit of product productID to user userID with the product's strategy.
// It returns the order, or an error matching inventory.ErrNotFound, inventory.ErrSoldOut,
// ErrAlreadyPurchased, ErrBusy or ErrUnavailable; anything else is a bug or an unexpected
// failure. Whatever it returns, nothing is half-written: the order and the decrement commit
// together or not at all.
func (s *Service) Purchase(ctx context.Context, productID, userID int64) (Order, error) {
	start := time.Now()
	p, err := s.Products.Meta(ctx, productID)
	if err != nil {
		err = classify(err)
		s.observe("", err, start)
		return Order{}, err
	}
	var o Order
	if s.SoldOut.Is(productID) {
		err = fmt.Errorf("product %d: %w", productID, inventory.ErrSoldOut)
	} else {
		o, err = s.buy(ctx, p, userID)
		err = classify(err)
	}
	s.observe(p.Strategy, err, start)
	return o, err
}

func (s *Service) buy(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	switch p.Strategy {
	case inventory.StrategyNaive:
		return s.buyNaive(ctx, p, userID)
	case inventory.StrategyPessimistic:
		return s.buyPessimistic(ctx, p, userID)
	case inventory.StrategyOptimistic:
		return s.buyOptimistic(ctx, p, userID)
	case inventory.StrategyRedis:
		return s.buyGated(ctx, p, userID)
	default:
		return s.buyLocked(ctx, p, userID)
	}
}

func (s *Service) observe(strategy inventory.Strategy, err error, start time.Time) {
	if s.Observer != nil {
		s.Observer.Purchased(strategy, Outcome(err), time.Since(start))
	}
}

// soldOutIfZero marks the product sold out when left is 0.
func (s *Service) soldOutIfZero(ctx context.Context, id int64, left int) {
	if left == 0 {
		s.SoldOut.Mark(ctx, id)
	}
}

// think pauses for the product's teaching delay, or until ctx ends.
func think(ctx context.Context, p inventory.Product) error {
	if p.ThinkMS == 0 {
		return nil
	}
	t := time.NewTimer(p.Think())
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// recheck reads the product's stock in tx (locking the row with forUpdate), marks it sold
// out when none is left (a committed zero: safe to share), then pauses for think_ms.
func (s *Service) recheck(ctx context.Context, tx *gorm.DB, p inventory.Product, forUpdate bool) error {
	stock, err := inventory.Stock(tx, p.ID, forUpdate)
	if err != nil {
		return err
	}
	if stock == 0 {
		s.SoldOut.Mark(ctx, p.ID)
		return fmt.Errorf("product %d: %w", p.ID, inventory.ErrSoldOut)
	}
	return think(ctx, p)
}

// repeatableRead makes a transaction's reads one consistent snapshot.
var repeatableRead = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
