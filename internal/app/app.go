// Package app wires seckill's parts into one HTTP handler: stores, the lock client, the
// purchase service, metrics and routes. cmd/api builds it from configuration; tests build
// it on their own schema and key prefix, so both run exactly the same wiring.
package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.opentelemetry.io/otel/trace"
	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/audit"
	"github.com/seckill/seckill/internal/authn"
	"github.com/seckill/seckill/internal/buildinfo"
	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/etcdlock"
	"github.com/seckill/seckill/internal/health"
	"github.com/seckill/seckill/internal/httpapi"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/metrics"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/zklock"
)

// Config is the parsed configuration of one API process.
type Config struct {
	DB          *gorm.DB              // required; App does not close it
	Redis       redis.UniversalClient // required; App does not close it
	RedisPrefix string                // namespace of every Redis key; default "seckill"
	AdminToken  string                // empty disables admin routes
	Order       order.Config
	SoldOut     inventory.SoldOutOptions // the sold-out marks' lease and hold; zero: defaults
	// ControlLease is how long a process trusts its copy of a product's controls; zero: inventory.ControlLease.
	ControlLease time.Duration
	Logger       *slog.Logger // default: discard
	// RateLimits caps purchase attempts per user and per client address; zero: no limits
	// (cmd/api turns the per-user limit on by default).
	RateLimits httpapi.RateLimits
	// LockNodes, when set, are independent Redis masters on which the product locks are
	// taken with Redlock (a majority of them), instead of in Redis. App does not close them.
	LockNodes []redis.UniversalClient
	// LockCohort is how many times in a row a product lock in Redis may pass to the next
	// holder of the same process in one Redis call (dlock's ClientOptions.Cohort); 0: never.
	LockCohort int
	// Etcd, when set, holds the lab's etcd locks (Plug) and, with LocksInEtcd
	// (LOCK_BACKEND=etcd), the product locks; the checker then watches it. App does not
	// close it.
	Etcd        *clientv3.Client
	LocksInEtcd bool
	// ZooKeeper, when its Servers are set, holds the lab's zookeeper locks and, with
	// LocksInZooKeeper (LOCK_BACKEND=zookeeper), the product locks; the checker then
	// watches it. The App owns and closes its clients.
	ZooKeeper        ZooKeeperConfig
	LocksInZooKeeper bool
	// Build labels the seckill_build_info metric; cmd/api passes buildinfo.Read().
	Build buildinfo.Info
	// Plug, when set, adds what a build plugs into the service from outside (Plugins): the
	// lab build's teaching strategies, think_ms and lock history (internal/labapi). Nil: the
	// production service.
	Plug func(Parts) Plugins
	// TracerProvider, when it records (tracing.Enabled), gives spans to requests, rate-limit
	// checks, dlock batches, lock waits and holds, and calls to cfg.Redis and LockNodes (New
	// hooks those clients); PostgreSQL's come from PostgresTracer. Nil: no spans.
	TracerProvider trace.TracerProvider
	// AccessLog says which requests get an access log line; zero: none.
	AccessLog httpapi.AccessLog
	// SelfAudit, when its Every is set, audits the products on sale periodically and exports
	// what it found (selfaudit.go); zero: off.
	SelfAudit SelfAuditConfig
	// Buyers, when set, turns buyer identity on (httpapi.Deps.Buyers); App rereads its keys
	// in the background (authn.Verifier.Run) until Close. Nil: off.
	Buyers *authn.Verifier
}

// App is a wired API process.
type App struct {
	Handler http.Handler // every route
	// PublicHandler is Handler without /metrics and the admin routes: for the listener the
	// load balancer reaches, when Handler is served on another (ADMIN_ADDR).
	PublicHandler http.Handler
	Orders        *order.Service
	Keys          inventory.Keys
	// Gate, Queue and SoldOut are the Redis parts of the redis and queue strategies and of the
	// sold-out mark that Orders uses, for tests and tools that look at them.
	Gate    *inventory.Gate
	Queue   *inventory.Queue
	SoldOut *inventory.SoldOut

	locks         *dlock.Client
	etcdLocks     *etcdlock.Client // nil unless cfg.LocksInEtcd
	zkLocks       *zklock.Client   // nil unless cfg.LocksInZooKeeper
	plugins       Plugins
	draining      atomic.Bool
	backends      *health.Checker // the shared backends, watched in the background
	stopListening context.CancelFunc
	listening     chan struct{}
}

// New wires an App. Call Close when the HTTP server has stopped.
func New(cfg Config) *App {
	if cfg.RedisPrefix == "" {
		cfg.RedisPrefix = "seckill"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	traceRedis(cfg)
	m := metrics.New(cfg.DB, cfg.Redis, cfg.Build)
	keys := inventory.Keys{Prefix: cfg.RedisPrefix}
	m.WatchSales(keys)
	products := inventory.NewStore(cfg.DB)
	products.SetControlLease(cfg.ControlLease)
	soldOut := inventory.NewSoldOut(cfg.Redis, products, keys, cfg.Logger, cfg.SoldOut)
	creations := inventory.NewCreations(cfg.Redis, keys, products, cfg.Logger)
	controls := inventory.NewControls(cfg.Redis, keys, products, cfg.Logger)
	a := &App{Keys: keys, Gate: inventory.NewGate(cfg.Redis, keys), Queue: inventory.NewQueue(cfg.Redis, keys),
		SoldOut: soldOut, locks: newLocks(cfg, m), listening: make(chan struct{})}
	productLocks := order.RedisLocker(a.locks)
	if cfg.LocksInEtcd && cfg.Etcd == nil {
		panic("app: LocksInEtcd needs Etcd")
	}
	if cfg.LocksInEtcd {
		a.etcdLocks = etcdlock.New(cfg.Etcd, m)
		productLocks = etcdLocker{a.etcdLocks}
	}
	if cfg.LocksInZooKeeper {
		if cfg.LocksInEtcd || len(cfg.ZooKeeper.Servers) == 0 {
			panic("app: LocksInZooKeeper needs ZooKeeper's Servers, and not LocksInEtcd")
		}
		a.zkLocks = zklock.New(cfg.ZooKeeper.Servers, zklock.Options{Observer: m, SessionTimeout: cfg.ZooKeeper.SessionTimeout})
		productLocks = zkLocker{a.zkLocks}
	}
	deps := order.Deps{
		Products: products, Locks: a.locks, ProductLocks: productLocks, Gate: a.Gate, Queue: a.Queue, SoldOut: soldOut,
		Line: inventory.NewLine(cfg.Redis, keys), Keys: keys, Observer: m, Logger: cfg.Logger, Tracer: cfg.TracerProvider,
	}
	if cfg.Plug != nil {
		a.plugins = cfg.Plug(Parts{Redis: cfg.Redis, Etcd: cfg.Etcd, DB: cfg.DB, ZooKeeper: cfg.ZooKeeper.Servers, Keys: keys, Logger: cfg.Logger})
		a.plugins.plug(products, &deps)
	}
	a.Orders = order.NewService(deps, cfg.Order)
	sqlDB, _ := cfg.DB.DB() // gorm's pool itself, pinged
	a.backends = newBackendChecker(cfg, a.withLockCheck(cfg, map[string]health.Check{
		"postgres": func(ctx context.Context) error { return sqlDB.PingContext(ctx) },
		"redis":    func(ctx context.Context) error { return cfg.Redis.Ping(ctx).Err() },
	}), m)
	api := httpapi.Deps{
		Logger:     cfg.Logger,
		Ready:      a.serving,
		Backends:   a.backends,
		AccessLog:  cfg.AccessLog,
		Products:   products,
		Orders:     a.Orders,
		AdminToken: cfg.AdminToken,
		Metrics:    m.LoggedHandler(cfg.Logger),
		Requests:   m,
		Limiter: httpapi.NewLimiter(httpapi.LimiterConfig{Redis: cfg.Redis, Prefix: cfg.RedisPrefix,
			Limits: cfg.RateLimits, Exempt: exempt(soldOut, products), Logger: cfg.Logger, Observer: m, Tracer: cfg.TracerProvider}),
		NoFair: noFair(cfg),
		Tracer: cfg.TracerProvider,
	}
	if cfg.Buyers != nil { // never a typed nil in the interface: nil means off
		api.Buyers = cfg.Buyers
	}
	a.Handler, a.PublicHandler = httpapi.NewServer(api), httpapi.NewPublicServer(api)
	ctx, cancel := context.WithCancel(context.Background())
	a.stopListening = cancel
	var listeners sync.WaitGroup
	listeners.Add(8)
	go func() { defer listeners.Done(); a.backends.Run(ctx) }()
	go func() { defer listeners.Done(); watchSkew(ctx, cfg.DB, m.ClockSkew, cfg.Logger) }()
	go func() { defer listeners.Done(); soldOut.Listen(ctx) }()
	go func() { defer listeners.Done(); creations.Listen(ctx) }()
	go func() { defer listeners.Done(); controls.Listen(ctx) }() // paused, ended, restocked elsewhere
	go func() { defer listeners.Done(); a.Orders.ListenQueue(ctx) }()
	go func() { defer listeners.Done(); a.startQueues(ctx, cfg.Logger) }()
	go func() { defer listeners.Done(); a.Orders.RunSweeper(ctx) }() // reservations past their pay_by
	if cfg.SelfAudit.Every > 0 {
		sa := newSelfAudit(cfg.SelfAudit, cfg.DB, audit.New(gormRows{cfg.DB}, cfg.Redis, keys), m.SelfAudit(), cfg.Logger)
		listeners.Add(1)
		go func() { defer listeners.Done(); sa.run(ctx) }()
	}
	if cfg.Buyers != nil {
		listeners.Add(1)
		go func() { defer listeners.Done(); cfg.Buyers.Run(ctx) }()
	}
	go func() { listeners.Wait(); close(a.listening) }()
	return a
}

// startQueues starts this process's consumers of the queue products that hold a backlog,
// now and every 5 s: a backlog left by a process that died is written even if no buyer of
// the product reaches this one.
func (a *App) startQueues(ctx context.Context, log *slog.Logger) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		if err := a.Orders.StartQueues(ctx); err != nil && ctx.Err() == nil {
			log.WarnContext(ctx, "queue consumers not checked", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// noFair is why this App cannot sell fair products: its locks are Redlock.
func noFair(cfg Config) error {
	if len(cfg.LockNodes) > 0 {
		return dlock.ErrFairRedlock
	}
	return nil
}

// newLocks returns the lock client, which reports to obs: Redlock over cfg.LockNodes when
// set, else locks in cfg.Redis.
func newLocks(cfg Config, obs dlock.Observer) *dlock.Client {
	opt := &dlock.ClientOptions{Observer: obs, Cohort: cfg.LockCohort}
	if len(cfg.LockNodes) > 0 {
		return dlock.NewRedlock(cfg.LockNodes, opt)
	}
	return dlock.New(cfg.Redis, opt)
}

// newBackendChecker returns the checker of the shared backends, which reports to obs and
// logs each change of a backend's state, once its first round has run: the gauges and /readyz's
// list are there from the start.
func newBackendChecker(cfg Config, checks map[string]health.Check, obs health.Observer) *health.Checker {
	c := health.NewChecker(checks, health.Options{Interval: BackendCheckInterval, Observer: obs, OnChange: func(r health.Result) {
		if r.Up {
			cfg.Logger.Info("backend up", "backend", r.Backend)
			return
		}
		cfg.Logger.Warn("backend down", "backend", r.Backend, "err", r.Err)
	}})
	c.Check(context.Background())
	return c
}

// BackendCheckInterval is how often each process checks its shared backends.
const BackendCheckInterval = 2 * time.Second

// withLockCheck adds to checks a check of the product locks' own store when it is not
// cfg.Redis: under Redlock, "redlock", that a majority of the lock nodes answer; with etcd,
// "etcd", that it serves a linearizable read (a majority of members and a leader); with
// ZooKeeper, "zookeeper", that the process has a session and a member answers a read in it.
func (a *App) withLockCheck(cfg Config, checks map[string]health.Check) map[string]health.Check {
	if len(cfg.LockNodes) > 0 {
		checks["redlock"] = a.locks.Ping
	}
	if cfg.LocksInEtcd {
		checks["etcd"] = a.etcdLocks.Ping
	}
	if a.zkLocks != nil {
		checks["zookeeper"] = a.zkLocks.Ping
	}
	return checks
}

// Drain turns /readyz to 503 so that load balancers stop sending requests before shutdown;
// requests are still served.
func (a *App) Drain() { a.draining.Store(true) }

var errDraining = errors.New("shutting down")

func (a *App) serving() error {
	if a.draining.Load() {
		return errDraining
	}
	return nil
}

// Close stops the App's background work. In-flight requests must be done first.
func (a *App) Close() error {
	a.stopListening()
	select {
	case <-a.listening:
	case <-time.After(5 * time.Second):
	}
	a.Orders.Close() // after startQueues has stopped: no consumer starts once it is closed
	errs := []error{a.locks.Close()}
	if a.plugins.Close != nil {
		errs = append(errs, a.plugins.Close())
	}
	if a.etcdLocks != nil {
		errs = append(errs, a.etcdLocks.Close())
	}
	if a.zkLocks != nil {
		errs = append(errs, a.zkLocks.Close())
	}
	return errors.Join(errs...)
}
