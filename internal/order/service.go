package order

import (
	"context"
	"database/sql"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/tracing"
)

// Config tunes the purchase service. The zero value means the documented defaults.
type Config struct {
	// LockTTL is the lease of a product lock; the watchdog renews it while the holder works.
	// Default: 2s.
	LockTTL time.Duration
	// LockWait is how long a buyer waits for a product's lock before the answer is ErrBusy.
	// Default: 1s.
	LockWait time.Duration
	// BatchMax caps the buyers a dlock holder serves in one transaction; 1 turns batching
	// off. Default: 128.
	BatchMax int
	// BatchLinger is how long a lock holder waits for more buyers to join its batch before
	// writing it. Default: 0, no waiting: batches form from buyers who arrive while the lock
	// is being waited for, and a lone buyer is served at once.
	BatchLinger time.Duration
	// PurchaseTimeout bounds one purchase's waits, think_ms and statements; past it the
	// purchase is ErrBusy and writes nothing, and it is answered within AfterDeadline more.
	// Default: 10s.
	PurchaseTimeout time.Duration
	// ProductConns caps the pooled connections one product's purchases hold at once in this
	// process; a buyer beyond it waits, or is ErrBusy after 5 ms once that line has stood
	// for 100 ms (see slots). Default: 10, half the default pool.
	ProductConns int
	// SeedChunk is how many buyers a step of a gate seeding moves from PostgreSQL to
	// Redis. Default: 10,000.
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
	// SweepInterval is how often RunSweeper expires the reservations past their pay_by.
	// Default: 1s; negative: RunSweeper does nothing (a test's own sweeps only).
	SweepInterval time.Duration
	// SweepBatch is the most products one pass of the sweeper takes and reservations it
	// expires of each, and the most returns to a gate it drives again. Default: 100.
	SweepBatch int
}

// Observer receives one event per purchase. It must be safe for concurrent use and fast.
type Observer interface {
	Purchased(strategy inventory.Strategy, outcome string, took time.Duration)
	Batch(size int) // the number of buyers one batch served at once (dlock, redis and queue strategies)
	// DeadLettered counts queued purchases moved to the dead-letter stream, by reason.
	DeadLettered(reason string, n int)
	// Settled is called for each unanswered COMMIT once settled: result is "committed",
	// "rolled_back" or "unknown".
	Settled(result string)
	// Reconciled is called when expired gate admissions (redis strategy) were settled with
	// PostgreSQL: confirmed ones had an order, the others' units went back to the gate.
	Reconciled(confirmed, givenBack int)
	// Returned counts units of ended reservations given back to stock, by the status they
	// ended in (StatusExpired, StatusCancelled).
	Returned(reason string, n int)
	// Shed counts purchases answered ErrBusy at once because they arrived at a standing
	// line for a product's connections (see slots), by strategy ("bundle" for bundles).
	Shed(strategy inventory.Strategy)
	// FenceRaised counts the product locks whose fence was raised above the one a product
	// held, once the product refused it: the lock's store had lost fences it gave out.
	FenceRaised()
}

// Deps are the parts a Service coordinates.
type Deps struct {
	Products *inventory.Store
	Locks    *dlock.Client // Redis locks: the gates' repairs, and the products' unless ProductLocks is set
	// ProductLocks is the dlock strategy's product lock (a lock history's decorator of it, in
	// the lab build); nil: RedisLocker(Locks).
	ProductLocks Locker
	Gate         *inventory.Gate
	Queue        *inventory.Queue
	SoldOut      *inventory.SoldOut
	Line         *inventory.Line // the products' pre-queues
	Keys         inventory.Keys
	Observer     Observer     // optional
	Logger       *slog.Logger // optional
	// Strategies are purchase paths plugged in from outside, by name: the lab build's
	// teaching strategies (internal/labapi). A product of a strategy that neither they nor
	// the production strategies serve is refused (inventory.ErrInvalid).
	Strategies map[inventory.Strategy]Strategy
	// Think takes products' think_ms pause (a teaching knob of the lab build); nil: none.
	Think Thinker
	// Tracer, when it records (see tracing.Enabled), gives each batch of the dlock strategy
	// spans: the batch, linked to each of its buyers' spans, the wait for the product's lock
	// and its hold (see trace.go). Nil or a no-op provider: no spans, at no cost.
	Tracer trace.TracerProvider
}

// Service sells products, handing each Purchase to its strategy's buyer (see the package doc).
// Safe for concurrent use.
type Service struct {
	c      *core
	gate   *inventory.Gate  // audits of redis products
	queue  *inventory.Queue // audits of queue products
	locked *lockedBuyer     // dlock products, and bundles
	queued *queuedBuyer     // queue products, and the consumers of this process
	// returns gives the units of ended reservations back (Pay, Cancel and the sweeper).
	returns *returner
	seeder  *seeder // the redis and queue strategies' gates, seeded ahead of a sale (Prepare)
	line    *inventory.Line
	buyers  map[inventory.Strategy]buyFunc
}

// buyFunc is one strategy's purchase of one unit of p by userID.
type buyFunc func(ctx context.Context, p inventory.Product, userID int64) (Order, error)

// NewService returns a Service over d with cfg.
func NewService(d Deps, cfg Config) *Service {
	cfg = cfg.WithDefaults()
	c := &core{db: d.Products.DB(), cfg: cfg, log: d.Logger, observer: d.Observer, products: d.Products,
		keys: d.Keys, soldOut: d.SoldOut, lists: &buyerLists{marks: d.SoldOut},
		thinker: d.Think, tracer: tracing.Tracer(d.Tracer)}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.observer == nil {
		c.observer = noObserver{}
	}
	c.slots = newSlots(cfg.ProductConns, c.observer)
	locks := d.ProductLocks
	if locks == nil {
		locks = RedisLocker(d.Locks)
	}
	seeder := &seeder{core: c, gate: d.Gate, locks: RedisLocker(d.Locks)}
	seeder.returns = &returner{core: c, gate: d.Gate, seeder: seeder}
	rows := rowLockBuyer{c}
	s := &Service{c: c, gate: d.Gate, queue: d.Queue, locked: newLockedBuyer(c, locks, nil),
		queued: newQueuedBuyer(c, d.Queue, seeder), returns: seeder.returns, seeder: seeder,
		line: d.Line}
	s.buyers = map[inventory.Strategy]buyFunc{
		inventory.StrategyDlock:       s.locked.buy,
		inventory.StrategyPessimistic: rows.pessimistic,
		inventory.StrategyOptimistic:  rows.optimistic,
		inventory.StrategyRedis:       newGatedBuyer(c, d.Gate, seeder).buy,
		inventory.StrategyQueue:       s.queued.buy,
	}
	for name, st := range d.Strategies {
		s.buyers[name] = func(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
			return st.Buy(ctx, Checkout{c}, p, userID)
		}
	}
	return s
}

// WithDefaults is cfg with the documented default in place of each zero field.
func (cfg Config) WithDefaults() Config {
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
	if cfg.SweepInterval == 0 {
		cfg.SweepInterval = time.Second
	}
	if cfg.SweepBatch <= 0 {
		cfg.SweepBatch = 100
	}
	return cfg
}

// Close stops this process's queue consumers once their batches are written. Call it once no
// purchase is in flight.
func (s *Service) Close() { s.queued.close() }

// StartQueues starts this process's consumer of every queue product with a backlog
// (inventory.Queue.Backlogged), so a dead process's queued purchases get written. Its error is
// Redis's. See docs/strategies.md#the-queue-strategy.
func (s *Service) StartQueues(ctx context.Context) error { return s.queued.start(ctx) }

// ListenQueue delivers the queue consumers' announcements to this process's waiting buyers
// until ctx ends. Run it once per Service.
func (s *Service) ListenQueue(ctx context.Context) { s.queued.listen(ctx) }

// noObserver is the Observer of a Service given none.
type noObserver struct{}

func (noObserver) Purchased(inventory.Strategy, string, time.Duration) {}
func (noObserver) Batch(int)                                           {}
func (noObserver) DeadLettered(string, int)                            {}
func (noObserver) Settled(string)                                      {}
func (noObserver) Reconciled(int, int)                                 {}
func (noObserver) Returned(string, int)                                {}
func (noObserver) Shed(inventory.Strategy)                             {}
func (noObserver) FenceRaised()                                        {}

// think takes the product's think_ms pause, if the service has a Thinker. Strategies take it
// before their transaction opens, where they can, so that it holds no connection.
func (c *core) think(ctx context.Context, p inventory.Product) error {
	if p.ThinkMS == 0 || c.thinker == nil {
		return nil
	}
	return c.thinker.Think(ctx, p)
}

// repeatableRead makes a transaction's reads one consistent snapshot.
var repeatableRead = &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true}
