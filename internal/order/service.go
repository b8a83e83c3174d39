package order

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/lab"
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
	// PurchaseTimeout bounds one purchase: waiting for the lock or a connection, think_ms
	// and the statements. A purchase past it is ErrBusy and writes nothing. A COMMIT sent
	// before it may take commitTimeout (5s) more, and finding out what became of a COMMIT
	// that got no answer settleTimeout (5s) more: every purchase is answered within
	// PurchaseTimeout + 10s. Default: 10s.
	PurchaseTimeout time.Duration
	// ProductConns caps how many pooled PostgreSQL connections the purchases of one product
	// hold at once in this process, so that one slow product (think_ms under a row lock, a
	// crowd) cannot starve the pool for the others; buyers beyond it wait in the process.
	// Default: 10, half the default pool.
	ProductConns int
	// SeedChunk is how many buyers one step of a gate seeding reads from PostgreSQL and
	// writes to Redis (redis and queue strategies). Default: 10,000.
	SeedChunk int
	// QueueWait is how long a queue-strategy buyer waits for its queued purchase to be
	// written before the answer is ErrAccepted. Default: 300ms; at most PurchaseTimeout.
	QueueWait time.Duration
	// QueueClaimIdle is how long a queued purchase read by one process's consumer may stay
	// unacknowledged before another process's consumer claims it (the first one died or is
	// stuck). Default: 5s.
	QueueClaimIdle time.Duration
	// QueueAttempts is how many times a consumer writes a queued batch that fails for a
	// reason other than an outage before it dead-letters it. Default: 3.
	QueueAttempts int
}

// Observer receives one event per purchase. It must be safe for concurrent use and fast.
type Observer interface {
	Purchased(strategy inventory.Strategy, outcome string, took time.Duration)
	Batch(size int) // the number of buyers one batch served at once (dlock, redis and queue strategies)
	// DeadLettered counts queued purchases moved to the dead-letter stream, by reason.
	DeadLettered(reason string, n int)
	// Settled is called for each COMMIT that got no answer, once PostgreSQL was asked what
	// became of it: result is "committed", "rolled_back" or "unknown".
	Settled(result string)
	// Reconciled is called when expired gate admissions (redis strategy) were settled with
	// PostgreSQL: confirmed ones had an order, the others' units went back to the gate.
	Reconciled(confirmed, givenBack int)
}

// Deps are the parts a Service coordinates.
type Deps struct {
	Products *inventory.Store
	Locks    *dlock.Client // Redis locks: the gates' repairs, and the products' unless ProductLocks is set
	// ProductLocks is the dlock strategy's product lock; nil: RedisLocker(Locks).
	ProductLocks Locker
	Gate         *inventory.Gate
	Queue        *inventory.Queue
	SoldOut      *inventory.SoldOut
	Keys         inventory.Keys
	Lab          *lab.Locks   // the oversell lab's locks (strategy lab); nil: lab products are unavailable
	Observer     Observer     // optional
	Logger       *slog.Logger // optional
}

// Service sells products: one Purchase is one buyer's attempt at one unit. It is safe for
// concurrent use.
type Service struct {
	Deps
	db        *gorm.DB
	cfg       Config
	batches   *batcher
	slots     *slots
	flights   flights    // gate seedings and reconciliations, one per product at a time
	writers   writers    // the redis strategy's writer slots (group commit behind the gate)
	waiters   waiters    // queue-strategy buyers waiting for their purchases to be written
	consumers *consumers // queue-strategy consumers of this process
	buyers    buyerLists // who holds an order of each sold-out product (the fast path's retries)
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
	if cfg.PurchaseTimeout <= 0 {
		cfg.PurchaseTimeout = 10 * time.Second
	}
	if cfg.ProductConns <= 0 {
		cfg.ProductConns = 10
	}
	if cfg.SeedChunk <= 0 {
		cfg.SeedChunk = 10_000
	}
	if cfg.QueueWait <= 0 {
		cfg.QueueWait = 300 * time.Millisecond
	}
	cfg.QueueWait = min(cfg.QueueWait, cfg.PurchaseTimeout)
	if cfg.QueueClaimIdle <= 0 {
		cfg.QueueClaimIdle = 5 * time.Second
	}
	if cfg.QueueAttempts <= 0 {
		cfg.QueueAttempts = 3
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.ProductLocks == nil {
		d.ProductLocks = RedisLocker(d.Locks)
	}
	return &Service{Deps: d, db: d.Products.DB(), cfg: cfg, batches: newBatcher(cfg.BatchMax),
		slots: newSlots(cfg.ProductConns), consumers: newConsumers()}
}

// Close stops this process's queue consumers, letting the batches they write finish. Call it
// once no purchase is in flight.
func (s *Service) Close() { s.consumers.close() }

// Purchase sells one unit of product productID to user userID with the product's strategy.
// It returns the order, or an error matching inventory.ErrNotFound, inventory.ErrSoldOut,
// ErrAlreadyPurchased (a *PurchasedError), ErrBusy, ErrUnavailable, ErrCanceled,
// ErrOutcomeUnknown or ErrAccepted (queue strategy: queued, not written yet); anything else is
// a bug. Every answer is true: an order is returned
// exactly when it is committed, every error but ErrOutcomeUnknown means nothing was
// written, and the order and its decrement commit together or not at all.
func (s *Service) Purchase(ctx context.Context, productID, userID int64) (Order, error) {
	var o Order
	err := s.bounded(ctx, func(pctx context.Context) (inventory.Strategy, error) {
		p, err := s.Products.Meta(pctx, productID)
		switch {
		case err != nil:
		case s.SoldOut.Is(productID):
			err = s.soldOut(pctx, productID, userID) // a retry of a buyer who has an order too
		default:
			o, err = s.buy(pctx, p, userID)
		}
		return p.Strategy, err
	})
	return o, err
}

// bounded runs one purchase, buy, on ctx with the purchase's own deadline
// (Config.PurchaseTimeout), turns its error into one of Purchase's documented errors (see
// explain) and reports it to the Observer under the strategy buy returns.
func (s *Service) bounded(ctx context.Context, buy func(pctx context.Context) (inventory.Strategy, error)) error {
	start := time.Now()
	deadline := start.Add(s.cfg.PurchaseTimeout)
	pctx, cancel := context.WithDeadlineCause(context.WithValue(ctx, deadlineKey{}, deadline), deadline, errDeadline)
	defer cancel()
	strategy, err := buy(pctx)
	err = explain(ctx, pctx, err)
	s.observe(strategy, err, start)
	return err
}

// deadlineKey is the context key of a purchase's own deadline (see detach).
type deadlineKey struct{}

// explain turns the error of a purchase on pctx (ctx with the purchase's deadline) into one
// of Purchase's documented errors: an error that stems from the context's end is ErrCanceled
// when the buyer went away, ErrBusy when the deadline passed.
func explain(ctx, pctx context.Context, err error) error {
	if err == nil || errors.Is(err, ErrOutcomeUnknown) {
		return err
	}
	ended := errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
	switch {
	case ended && ctx.Err() != nil:
		return fmt.Errorf("%w: %w", ErrCanceled, err)
	case ended && pctx.Err() != nil:
		return fmt.Errorf("%w: %w", errDeadline, err)
	}
	return classify(err)
}

func (s *Service) buy(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	if buy, ok := buyers[p.Strategy]; ok {
		return buy(s, ctx, p, userID)
	}
	return s.buyLocked(ctx, p, userID) // dlock, the default
}

// buyers are the purchase paths of the strategies other than dlock.
var buyers = map[inventory.Strategy]func(*Service, context.Context, inventory.Product, int64) (Order, error){
	inventory.StrategyNaive:       (*Service).buyNaive,
	inventory.StrategyPessimistic: (*Service).buyPessimistic,
	inventory.StrategyOptimistic:  (*Service).buyOptimistic,
	inventory.StrategyRedis:       (*Service).buyGated,
	inventory.StrategyQueue:       (*Service).buyQueued,
	inventory.StrategyLab:         (*Service).buyLab,
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

// think pauses for the product's teaching delay, or until ctx ends. Strategies take it
// before their transaction opens, where they can, so that it holds no connection.
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

// repeatableRead makes a transaction's reads one consistent snapshot.
var repeatableRead = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
