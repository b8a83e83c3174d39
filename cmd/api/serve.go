package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/buildinfo"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/reqid"
	"github.com/seckill/seckill/internal/tracing"
)

// newLogger writes JSON lines to w; a line logged with a request's context (slog's *Context
// methods) carries the request's id as request_id (reqid.NewHandler).
func newLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(reqid.NewHandler(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})))
}

// serve runs the API, which reports build on /metrics and in its "listening" line, until ctx
// is cancelled, then drains in-flight requests.
func serve(ctx context.Context, cfg config, build buildinfo.Info, log *slog.Logger) error {
	routeLibraryLogs(log)
	tp, stopTracing, err := newTracerProvider(ctx, cfg.tracing)
	if err != nil {
		return err
	}
	defer flushTraces(stopTracing, log) // last: after the server and the app have stopped
	if tracing.Enabled(tp) {
		log.Info("tracing on", "endpoint", cfg.tracing.endpointURL, "service", cfg.tracing.serviceName)
	}
	gdb, err := openDatabase(ctx, cfg, app.PostgresTracer(tp), log)
	if err != nil {
		return err
	}
	defer closeDatabase(gdb)
	redis.SetLogger(redisLogger{log})
	rdb := newRedisClient(cfg)
	defer rdb.Close()
	lockNodes := newLockNodes(cfg)
	defer closeAll(lockNodes)
	logRedisTopology(log, cfg)
	etcdCli, err := newEtcdClient(cfg.etcd)
	if err != nil {
		return err
	}
	if etcdCli != nil {
		defer etcdCli.Close()
	}
	logLockBackend(log, cfg)
	warnEtcdFences(ctx, cfg, inventory.NewStore(gdb), log)
	if cfg.adminToken == "" {
		log.Warn("ADMIN_TOKEN is empty: admin routes answer 403")
	}
	if cfg.shutdownTimeout < cfg.writeTimeout {
		log.Warn("SHUTDOWN_TIMEOUT is shorter than WRITE_TIMEOUT: a purchase in flight at shutdown may commit and lose its answer",
			"shutdown_timeout", cfg.shutdownTimeout.String(), "write_timeout", cfg.writeTimeout.String())
	}
	buyers, err := cfg.authn.verifier(log)
	if err != nil {
		return err
	}
	plug, closePlug, err := labPlug(cfg, log) // nil in production: lab.go, nolab.go
	if err != nil {
		return err
	}
	defer closePlug()
	a := app.New(app.Config{
		DB: gdb, Redis: rdb, LockNodes: lockNodes, LockCohort: cfg.lockCohort, Etcd: etcdCli, LocksInEtcd: cfg.lockBackend == backendEtcd, RedisPrefix: cfg.redisPrefix, AdminToken: cfg.adminToken, Logger: log,
		RateLimits: cfg.rateLimits, SoldOut: cfg.soldOut, ControlLease: cfg.controlLease, Build: build, Plug: plug, TracerProvider: tp, AccessLog: cfg.accessLog,
		SelfAudit: cfg.selfAudit,
		Buyers:    buyers,
		ZooKeeper: cfg.zookeeper, LocksInZooKeeper: cfg.lockBackend == backendZooKeeper,
		Order: order.Config{
			LockTTL: cfg.lockTTL, LockWait: cfg.lockWait, BatchMax: cfg.batchMax, BatchLinger: cfg.batchLinger,
			PurchaseTimeout: cfg.purchaseTimeout, ProductConns: max(1, cfg.dbMaxConns/2),
			QueueWait: cfg.queueWait, QueueClaimIdle: cfg.queueClaimIdle, QueueAttempts: cfg.queueAttempts,
			SweepInterval: cfg.sweepInterval, SweepBatch: cfg.sweepBatch,
		},
	})
	defer a.Close()
	handler := a.Handler
	if cfg.adminAddr != "" {
		handler = a.PublicHandler
		adminSrv, err := serveAdmin(ctx, cfg, a.Handler, log)
		if err != nil {
			return err
		}
		defer adminSrv.Close() // after the drain of the public listener
	}
	if cfg.pprofAddr != "" {
		pprofSrv := servePprof(cfg.pprofAddr, log)
		defer pprofSrv.Close()
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      cfg.writeTimeout,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("listening", "addr", ln.Addr().String(), "build", build)

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	a.Drain()
	if cfg.shutdownDelay > 0 {
		log.Info("shutting down: readyz answers 503; still serving", "delay", cfg.shutdownDelay.String())
		time.Sleep(cfg.shutdownDelay)
	}
	log.Info("shutting down: draining in-flight requests", "timeout", cfg.shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("stopped")
	return nil
}

// serveAdmin serves h, every route, on ADMIN_ADDR, until the returned server is closed: the
// listener of /metrics and the admin routes, which no load balancer routes to.
func serveAdmin(ctx context.Context, cfg config, h http.Handler, log *slog.Logger) (*http.Server, error) {
	ln, err := net.Listen("tcp", cfg.adminAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on ADMIN_ADDR %s: %w", cfg.adminAddr, err)
	}
	srv := &http.Server{
		Handler: h, ReadHeaderTimeout: readHeaderTimeout, ReadTimeout: readTimeout, WriteTimeout: cfg.writeTimeout,
		IdleTimeout: 120 * time.Second, MaxHeaderBytes: 16 << 10,
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("admin listener stopped", "err", err)
		}
	}()
	log.Info("admin listening: /metrics and the admin routes", "addr", ln.Addr().String())
	return srv, nil
}

// openDatabase connects to PostgreSQL, waiting up to the start-up timeout for it to answer,
// and applies migrations unless told not to.
func openDatabase(ctx context.Context, cfg config, tracer pgx.QueryTracer, log *slog.Logger) (*gorm.DB, error) {
	gdb, err := db.Open(cfg.databaseURL, db.PoolOptions{MaxOpen: cfg.dbMaxConns,
		IdleInTransactionTimeout: order.IdleInTransactionTimeout(cfg.purchaseTimeout), Tracer: tracer})
	if err != nil {
		return nil, err
	}
	if err := waitForDB(ctx, gdb, cfg.startupTimeout, log); err != nil {
		closeDatabase(gdb)
		return nil, err
	}
	if cfg.migrate {
		sqlDB, _ := gdb.DB()
		if err := db.Migrate(ctx, sqlDB); err != nil {
			closeDatabase(gdb)
			return nil, err
		}
		log.Info("migrations applied")
	}
	return gdb, nil
}

// waitForDB pings until PostgreSQL answers, ctx ends or the timeout passes.
func waitForDB(ctx context.Context, gdb *gorm.DB, timeout time.Duration, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for delay := 100 * time.Millisecond; ; delay = min(2*delay, 2*time.Second) {
		err := pingDB(ctx, gdb)
		if err == nil {
			return nil
		}
		log.Warn("PostgreSQL not answering yet", "err", err, "retry_in", delay.String())
		select {
		case <-ctx.Done():
			return fmt.Errorf("PostgreSQL did not answer within %s: %w", timeout, err)
		case <-time.After(delay):
		}
	}
}

func pingDB(ctx context.Context, gdb *gorm.DB) error {
	sqlDB, err := gdb.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

func closeDatabase(gdb *gorm.DB) {
	if sqlDB, err := gdb.DB(); err == nil {
		sqlDB.Close()
	}
}

// migrateOnly applies pending migrations and reports on stdout.
func migrateOnly(ctx context.Context, cfg config, log *slog.Logger, stdout io.Writer) error {
	cfg.migrate = true
	gdb, err := openDatabase(ctx, cfg, nil, log)
	if err != nil {
		return err
	}
	closeDatabase(gdb)
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}

// healthcheck asks the API listening on addr (on this host) for /readyz.
func healthcheck(ctx context.Context, addr string, stdout io.Writer) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("HTTP_ADDR %q: %w", addr, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+port+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("readyz: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("readyz: %s", resp.Status)
	}
	fmt.Fprintln(stdout, "ready")
	return nil
}

// servePprof serves the runtime profiles on addr, for performance work, until the returned
// server is closed. It is off unless PPROF_ADDR is set, and parseConfig accepts only a loopback
// address: the profiles show the program's internals and cost CPU to produce.
func servePprof(addr string, log *slog.Logger) *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	log.Info("pprof listening", "addr", addr)
	go func() {
		if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			log.Error("pprof stopped", "err", err)
		}
	}()
	return srv
}
