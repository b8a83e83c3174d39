package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/envflag"
	"github.com/seckill/seckill/internal/httpapi"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// minAdminToken is the fewest characters a non-empty ADMIN_TOKEN may have: a short token is
// guessed, and the admin routes create products and read audits.
const minAdminToken = 16

// config is everything cmd/api reads from the environment, each field overridable by a flag.
type config struct {
	addr            string
	adminAddr       string            // ADMIN_ADDR: /metrics and the admin routes there, not on addr; empty: on addr
	accessLog       httpapi.AccessLog // ACCESS_LOG, ACCESS_LOG_SAMPLE
	databaseURL     string
	redis           redisNode           // REDIS_ADDR when it names one Redis
	redisCluster    []redisNode         // REDIS_CLUSTER_ADDRS, or a REDIS_ADDR list: a cluster client (see redis.go)
	redisSentinel   sentinelSet         // REDIS_SENTINEL_ADDRS and REDIS_SENTINEL_MASTER: a failover client (see sentinel.go)
	redlock         []redisNode         // REDLOCK_ADDRS: product locks with Redlock over these masters
	lockBackend     string              // LOCK_BACKEND: redis, etcd or zookeeper (see etcd.go)
	etcd            etcdConfig          // ETCD_ENDPOINTS and its credentials
	zookeeper       app.ZooKeeperConfig // ZOOKEEPER_SERVERS, ZOOKEEPER_SESSION_TIMEOUT (see zookeeper.go)
	adminToken      string
	redisPrefix     string
	logLevel        slog.Level
	dbMaxConns      int
	lockTTL         time.Duration
	lockWait        time.Duration
	batchMax        int
	lockCohort      int // LOCK_COHORT
	batchLinger     time.Duration
	purchaseTimeout time.Duration
	writeTimeout    time.Duration // WRITE_TIMEOUT, or answerBudget's
	queueWait       time.Duration
	queueClaimIdle  time.Duration
	queueAttempts   int
	sweepInterval   time.Duration
	sweepBatch      int
	selfAudit       app.SelfAuditConfig      // SELF_AUDIT_INTERVAL, SELF_AUDIT_PRODUCTS
	soldOut         inventory.SoldOutOptions // SOLDOUT_LEASE, SOLDOUT_HOLD
	controlLease    time.Duration            // CONTROL_LEASE
	pprofAddr       string
	lockHistory     string // LOCK_HISTORY: a test and lab tool of the lab build (see lab.go)
	shutdownTimeout time.Duration
	shutdownDelay   time.Duration
	startupTimeout  time.Duration
	migrate         bool
	rateLimits      httpapi.RateLimits
	version         bool          // -version, no variable: print the build and exit
	tracing         tracingConfig // the OTEL_* variables of traces (see tracing.go)
	authn           authnConfig   // the AUTH_* variables of buyer identity (see authn.go)
}

// secrets are the settings that may hold a password or a token. Each may be given in a file
// instead, named by its _FILE form (ADMIN_TOKEN_FILE), and none shows its default in the
// usage message.
var secrets = []string{"DATABASE_URL", "REDIS_ADDR", "REDIS_CLUSTER_ADDRS", "REDIS_SENTINEL_ADDRS", "REDLOCK_ADDRS", "REDIS_PASSWORD",
	"REDIS_SENTINEL_PASSWORD", "ETCD_PASSWORD", "ADMIN_TOKEN"}

// parseConfig reads the environment through lookupEnv (os.LookupEnv), then lets flags in
// args override it. args excludes the program name and any subcommand. -h prints the usage
// message to stderr and returns flag.ErrHelp.
func parseConfig(args []string, lookupEnv func(string) (string, bool), stderr io.Writer) (config, error) {
	getenv, fileErr := envflag.Files(func(k string) string { v, _ := lookupEnv(k); return v }, secrets...)
	var cfg config
	fs := flag.NewFlagSet("api", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	e := envflag.New(fs, getenv)
	e.StringVar(&cfg.addr, "addr", "HTTP_ADDR", ":8080", "listen address (env HTTP_ADDR)")
	e.StringVar(&cfg.adminAddr, "admin-addr", "ADMIN_ADDR", "",
		"second listen address, for /metrics and the admin routes, which HTTP_ADDR then does not serve; empty: all on HTTP_ADDR (env ADMIN_ADDR)")
	accessLog := e.String("access-log", "ACCESS_LOG", httpapi.AccessLogAll, "one log line per request: all, errors (status 499 and 5xx only) or off (env ACCESS_LOG)")
	accessSample := e.String("access-log-sample", "ACCESS_LOG_SAMPLE", "0.01", "share, 0 to 1, of the 409 and 429 answers (sold_out, rate_limited, ...) logged under ACCESS_LOG=all (env ACCESS_LOG_SAMPLE)")
	// The settings that may hold a password or a token are quiet: -h and a flag error print
	// every flag's default, which comes from the environment.
	e.QuietVar(&cfg.databaseURL, "database-url", "DATABASE_URL", "postgres://seckill:seckill@127.0.0.1:5432/seckill?sslmode=disable",
		"PostgreSQL `URL` (env DATABASE_URL; default postgres://seckill:...@127.0.0.1:5432/seckill?sslmode=disable)")
	var rs redisSettings
	e.QuietVar(&rs.addr, "redis-addr", "REDIS_ADDR", "127.0.0.1:6379",
		"Redis `address`: host:port or redis[s]://[user:password@]host:port[/db] URL, or a comma-separated list of Redis Cluster nodes (env REDIS_ADDR; default 127.0.0.1:6379)")
	e.QuietVar(&rs.cluster, "redis-cluster-addrs", "REDIS_CLUSTER_ADDRS", "", "comma-separated Redis Cluster `nodes` (host:port or URLs); overrides REDIS_ADDR (env REDIS_CLUSTER_ADDRS)")
	e.QuietVar(&rs.sentinels, "redis-sentinel-addrs", "REDIS_SENTINEL_ADDRS", "",
		"comma-separated Redis Sentinel `addresses` (host:port or URLs) watching the master REDIS_SENTINEL_MASTER; with it, overrides REDIS_ADDR (env REDIS_SENTINEL_ADDRS)")
	e.StringVar(&rs.master, "redis-sentinel-master", "REDIS_SENTINEL_MASTER", "", "`name` of the master the sentinels of REDIS_SENTINEL_ADDRS watch (env REDIS_SENTINEL_MASTER)")
	e.StringVar(&rs.sentinelUser, "redis-sentinel-username", "REDIS_SENTINEL_USERNAME", "",
		"ACL user of the sentinels whose URL names none (env REDIS_SENTINEL_USERNAME; the password is REDIS_SENTINEL_PASSWORD, which has no flag)")
	e.QuietVar(&rs.redlock, "redlock-addrs", "REDLOCK_ADDRS", "", "comma-separated independent Redis `masters` (3 or more; host:port or URLs) for the product locks, with Redlock (env REDLOCK_ADDRS)")
	lockBackend := e.String("lock-backend", "LOCK_BACKEND", backendRedis, "where the dlock strategy's product locks live: redis, etcd or zookeeper (env LOCK_BACKEND)")
	zkServers := e.String("zookeeper-servers", "ZOOKEEPER_SERVERS", "127.0.0.1:2181",
		"comma-separated ZooKeeper `members` (host:port) for LOCK_BACKEND=zookeeper and the lab's zookeeper locks (env ZOOKEEPER_SERVERS)")
	e.DurationVar(&cfg.zookeeper.SessionTimeout, "zookeeper-session-timeout", "ZOOKEEPER_SESSION_TIMEOUT", 0,
		"the ZooKeeper session the product locks are held in, as asked of the ensemble (which bounds it); 0s: LOCK_TTL (env ZOOKEEPER_SESSION_TIMEOUT)")
	etcdEndpoints := e.String("etcd-endpoints", "ETCD_ENDPOINTS", "http://127.0.0.1:2379",
		"comma-separated etcd `endpoints` (host:port or http[s]:// URLs) for LOCK_BACKEND=etcd and the lab's etcd lock (env ETCD_ENDPOINTS)")
	etcdUser := e.String("etcd-username", "ETCD_USERNAME", "", "etcd user, if etcd's auth is on (env ETCD_USERNAME; the password is ETCD_PASSWORD, which has no flag)")
	e.StringVar(&rs.user, "redis-username", "REDIS_USERNAME", "", "Redis ACL user for every Redis address whose URL names none (env REDIS_USERNAME; the password is REDIS_PASSWORD, which has no flag)")
	e.QuietVar(&cfg.adminToken, "admin-token", "ADMIN_TOKEN", "",
		"bearer `token` for admin routes, at least 16 characters; empty disables them (env ADMIN_TOKEN; prefer the env, argv is visible to ps)")
	e.StringVar(&cfg.redisPrefix, "redis-prefix", "REDIS_KEY_PREFIX", "seckill", "namespace of every Redis key (env REDIS_KEY_PREFIX)")
	e.StringVar(&cfg.pprofAddr, "pprof-addr", "PPROF_ADDR", "", "serve net/http/pprof on this loopback address, e.g. 127.0.0.1:6060; empty: off (env PPROF_ADDR)")
	e.StringVar(&cfg.lockHistory, "lock-history", "LOCK_HISTORY", "", "append every product lock grant, write, loss and release to this `file` as JSON lines, for a linearizability checker; a test and lab tool of the lab build (-tags lab); empty: off (env LOCK_HISTORY)")
	level := e.String("log-level", "LOG_LEVEL", "info", "debug, info, warn or error (env LOG_LEVEL)")
	e.IntVar(&cfg.dbMaxConns, "db-max-conns", "DB_MAX_CONNS", 20, "PostgreSQL pool size (env DB_MAX_CONNS)")
	e.DurationVar(&cfg.lockTTL, "lock-ttl", "LOCK_TTL", 2*time.Second, "lease of a product lock; the watchdog renews it (env LOCK_TTL)")
	e.DurationVar(&cfg.lockWait, "lock-wait", "LOCK_WAIT", time.Second, "how long a buyer waits for a product lock before 503 busy (env LOCK_WAIT)")
	e.IntVar(&cfg.lockCohort, "lock-cohort", "LOCK_COHORT", 0, "how many times in a row a product lock in Redis passes to the next batch of this process in one Redis call, before it is released to all; 0 never (env LOCK_COHORT)")
	e.IntVar(&cfg.batchMax, "batch-max", "BATCH_MAX", 128, "most buyers one lock holder serves in one transaction; 1 disables batching (env BATCH_MAX)")
	e.DurationVar(&cfg.batchLinger, "batch-linger", "BATCH_LINGER", 0, "how long a lock holder waits for its batch to fill (env BATCH_LINGER; default 0s)")
	e.DurationVar(&cfg.queueWait, "queue-wait", "QUEUE_WAIT", 300*time.Millisecond, "how long a queue-strategy purchase waits for its order to be written before 202 Accepted, at most PURCHASE_TIMEOUT (env QUEUE_WAIT)")
	e.DurationVar(&cfg.queueClaimIdle, "queue-claim-idle", "QUEUE_CLAIM_IDLE", 5*time.Second, "how long a queued purchase read by a consumer stays unacknowledged before another process claims it (env QUEUE_CLAIM_IDLE)")
	e.DurationVar(&cfg.soldOut.Lease, "soldout-lease", "SOLDOUT_LEASE", 200*time.Millisecond, "how long a process answers sold_out from a sold-out mark after it last found the mark in Redis; a lift waits this long (env SOLDOUT_LEASE)")
	e.DurationVar(&cfg.controlLease, "control-lease", "CONTROL_LEASE", inventory.ControlLease, "how long a process trusts its copy of a product's pause, end and restocks when an announcement is lost (env CONTROL_LEASE)")
	e.DurationVar(&cfg.soldOut.Hold, "soldout-hold", "SOLDOUT_HOLD", 10*time.Second, "how long after a lift no sold-out mark is made: the time a returned unit has to reach PostgreSQL (env SOLDOUT_HOLD)")
	e.IntVar(&cfg.queueAttempts, "queue-attempts", "QUEUE_ATTEMPTS", 3, "writes of a queued batch failing for a reason other than an outage before it is dead-lettered (env QUEUE_ATTEMPTS)")
	e.DurationVar(&cfg.sweepInterval, "sweep-interval", "SWEEP_INTERVAL", time.Second, "how often this process's sweeper expires the reservations past their pay_by, giving their units back (env SWEEP_INTERVAL)")
	e.IntVar(&cfg.sweepBatch, "sweep-batch", "SWEEP_BATCH", 100, "most products one sweep takes, and reservations it expires of each (env SWEEP_BATCH)")
	e.DurationVar(&cfg.selfAudit.Every, "self-audit-interval", "SELF_AUDIT_INTERVAL", 30*time.Second, "how often this process audits the products sold within the last hour and exports what it found (seckill_audit_inconsistent_products); 0s: off (env SELF_AUDIT_INTERVAL)")
	e.IntVar(&cfg.selfAudit.Products, "self-audit-products", "SELF_AUDIT_PRODUCTS", 50, "most products one self-audit round reads, the newest first (env SELF_AUDIT_PRODUCTS)")
	e.DurationVar(&cfg.purchaseTimeout, "purchase-timeout", "PURCHASE_TIMEOUT", 10*time.Second, "server-side deadline of one purchase, at most 15s (env PURCHASE_TIMEOUT)")
	// Empty means derived: these two stay strings, and their usage names their type.
	writeTimeoutText := e.String("write-timeout", "WRITE_TIMEOUT", "", "the HTTP server's limit on answering a request, a `duration` counted from the end of its headers; empty: "+
		"what the worst purchase needs, body read + rate limit check + PURCHASE_TIMEOUT + 10s + 3s (env WRITE_TIMEOUT)")
	shutdown := e.String("shutdown-timeout", "SHUTDOWN_TIMEOUT", "", "how long (a `duration`) SIGTERM waits for in-flight requests; empty: WRITE_TIMEOUT, so that a purchase in flight is answered (env SHUTDOWN_TIMEOUT)")
	e.DurationVar(&cfg.shutdownDelay, "shutdown-delay", "SHUTDOWN_DELAY", 0, "on SIGTERM, answer /readyz 503 this long before closing the listener (env SHUTDOWN_DELAY; default 0s)")
	e.DurationVar(&cfg.startupTimeout, "startup-timeout", "STARTUP_TIMEOUT", 60*time.Second, "how long start-up waits for PostgreSQL (env STARTUP_TIMEOUT)")
	rateUser := e.String("rate-limit-user", "RATE_LIMIT_USER", "10/s", "purchase attempts per user and product: N/s, N/m, N/h or off (env RATE_LIMIT_USER)")
	rateAddr := e.String("rate-limit-addr", "RATE_LIMIT_ADDR", "off", "purchase attempts per client address: N/s, N/m, N/h or off (env RATE_LIMIT_ADDR)")
	e.BoolVar(&cfg.migrate, "migrate", "MIGRATE_ON_START", true, "apply migrations at start (env MIGRATE_ON_START: true or false, as Go's strconv.ParseBool reads them)")
	addAuthnFlags(e, &cfg.authn)
	fs.BoolVar(&cfg.version, "version", false, "print the build (version, VCS revision and time, modified, Go version) and exit")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		return config{}, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if cfg.version { // the rest of the configuration does not matter
		return cfg, nil
	}
	errs := append([]error{fileErr, e.Err()}, setButEmpty(lookupEnv)...)
	// REDIS_PASSWORD has no flag: arguments are visible to ps.
	rs.password, rs.sentinelPassword = getenv("REDIS_PASSWORD"), getenv("REDIS_SENTINEL_PASSWORD")
	errs = append(errs, cfg.parseRedisTopology(rs)...)
	errs = append(errs, cfg.authn.check()...)
	explicit := getenv("ETCD_ENDPOINTS") != ""
	fs.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "etcd-endpoints" })
	errs = append(errs, cfg.parseLockBackend(*lockBackend, *etcdEndpoints, explicit, *etcdUser, getenv("ETCD_PASSWORD"))...)
	zkExplicit := getenv("ZOOKEEPER_SERVERS") != ""
	fs.Visit(func(f *flag.Flag) { zkExplicit = zkExplicit || f.Name == "zookeeper-servers" })
	errs = append(errs, cfg.parseZooKeeper(*zkServers, zkExplicit)...)
	if cfg.databaseURL == "" { // only -database-url "" gets here: the variable is checked above
		errs = append(errs, errors.New("-database-url is empty: give PostgreSQL's URL, or leave the flag out"))
	}
	// Never quote the token: a typo in it is still most of the secret.
	if n := utf8.RuneCountInString(cfg.adminToken); n > 0 && n < minAdminToken {
		errs = append(errs, fmt.Errorf("ADMIN_TOKEN: want at least %d characters, or empty to disable the admin routes", minAdminToken))
	}
	if cfg.pprofAddr != "" && !isLoopback(cfg.pprofAddr) {
		errs = append(errs, fmt.Errorf("PPROF_ADDR %q: want a loopback host:port, such as 127.0.0.1:6060, [::1]:6060 or localhost:6060", cfg.pprofAddr))
	}
	if err := cfg.logLevel.UnmarshalText([]byte(*level)); err != nil {
		errs = append(errs, fmt.Errorf("LOG_LEVEL %q: want debug, info, warn or error", *level))
	}
	if cfg.dbMaxConns < 1 {
		errs = append(errs, fmt.Errorf("DB_MAX_CONNS %d: want a positive integer", cfg.dbMaxConns))
	}
	if cfg.lockCohort < 0 || cfg.lockCohort > 1000 {
		errs = append(errs, fmt.Errorf("LOCK_COHORT %d: want an integer from 0 to 1000", cfg.lockCohort))
	}
	if cfg.batchMax < 1 || cfg.batchMax > 10000 {
		errs = append(errs, fmt.Errorf("BATCH_MAX %d: want an integer from 1 to 10000", cfg.batchMax))
	}
	if cfg.selfAudit.Products < 1 || cfg.selfAudit.Products > 1000 {
		errs = append(errs, fmt.Errorf("SELF_AUDIT_PRODUCTS %d: want an integer from 1 to 1000", cfg.selfAudit.Products))
	}
	if cfg.sweepBatch < 1 || cfg.sweepBatch > 10_000 {
		errs = append(errs, fmt.Errorf("SWEEP_BATCH %d: want an integer from 1 to 10000", cfg.sweepBatch))
	}
	if cfg.queueAttempts < 1 || cfg.queueAttempts > 100 {
		errs = append(errs, fmt.Errorf("QUEUE_ATTEMPTS %d: want an integer from 1 to 100", cfg.queueAttempts))
	}
	var err error
	if cfg.accessLog, err = httpapi.ParseAccessLog(*accessLog, *accessSample); err != nil {
		errs = append(errs, err)
	}
	if cfg.adminAddr != "" && cfg.adminAddr == cfg.addr {
		errs = append(errs, fmt.Errorf("ADMIN_ADDR %q: the same as HTTP_ADDR; give another port, or leave it empty to serve all on HTTP_ADDR", cfg.adminAddr))
	}
	if cfg.tracing, err = parseTracing(getenv); err != nil {
		errs = append(errs, err)
	}
	if cfg.rateLimits.User, err = httpapi.ParseRate(*rateUser); err != nil {
		errs = append(errs, fmt.Errorf("RATE_LIMIT_USER: %w", err))
	}
	if cfg.rateLimits.Addr, err = httpapi.ParseRate(*rateAddr); err != nil {
		errs = append(errs, fmt.Errorf("RATE_LIMIT_ADDR: %w", err))
	}
	durations := []struct {
		name string
		d    time.Duration
		min  time.Duration
	}{
		{"LOCK_TTL", cfg.lockTTL, 100 * time.Millisecond},
		{"LOCK_WAIT", cfg.lockWait, time.Millisecond},
		{"BATCH_LINGER", cfg.batchLinger, 0},
		{"PURCHASE_TIMEOUT", cfg.purchaseTimeout, 100 * time.Millisecond},
		{"QUEUE_WAIT", cfg.queueWait, time.Millisecond},
		{"QUEUE_CLAIM_IDLE", cfg.queueClaimIdle, 100 * time.Millisecond},
		{"SWEEP_INTERVAL", cfg.sweepInterval, 10 * time.Millisecond},
		{"SOLDOUT_LEASE", cfg.soldOut.Lease, 10 * time.Millisecond},
		{"SOLDOUT_HOLD", cfg.soldOut.Hold, time.Second},
		{"CONTROL_LEASE", cfg.controlLease, 10 * time.Millisecond},
		{"SHUTDOWN_DELAY", cfg.shutdownDelay, 0},
		{"STARTUP_TIMEOUT", cfg.startupTimeout, time.Millisecond},
		{"SELF_AUDIT_INTERVAL", cfg.selfAudit.Every, 0},
	}
	for _, d := range durations {
		if d.d < d.min {
			errs = append(errs, fmt.Errorf("%s %s: want a duration of at least %s, such as 2s", d.name, d.d, d.min))
		}
	}
	if cfg.purchaseTimeout > maxPurchaseTimeout {
		errs = append(errs, fmt.Errorf("PURCHASE_TIMEOUT %s: at most %s", cfg.purchaseTimeout, maxPurchaseTimeout))
	}
	need := answerBudget(cfg.purchaseTimeout)
	if cfg.writeTimeout, err = orDerived(*writeTimeoutText, need); err != nil || cfg.writeTimeout < need {
		errs = append(errs, fmt.Errorf("WRITE_TIMEOUT %q: want at least %s, so that a committed purchase's answer reaches the client: "+
			"the body's read (%s) + the rate limit check (%s) + PURCHASE_TIMEOUT (%s) + COMMIT and its settling (%s) + %s to write it",
			*writeTimeoutText, need, readTimeout, limiterWait, cfg.purchaseTimeout, order.AfterDeadline, writeMargin))
	}
	if cfg.shutdownTimeout, err = orDerived(*shutdown, cfg.writeTimeout); err != nil || cfg.shutdownTimeout < time.Millisecond {
		errs = append(errs, fmt.Errorf("SHUTDOWN_TIMEOUT %q: want a duration of at least 1ms, such as 2s", *shutdown))
	}
	if cfg.soldOut.Hold < 4*cfg.soldOut.Lease {
		errs = append(errs, fmt.Errorf("SOLDOUT_HOLD %s: want at least 4 × SOLDOUT_LEASE (%s)", cfg.soldOut.Hold, cfg.soldOut.Lease))
	}
	if cfg.queueWait > cfg.purchaseTimeout && cfg.purchaseTimeout > 0 {
		errs = append(errs, fmt.Errorf("QUEUE_WAIT %s: at most PURCHASE_TIMEOUT (%s)", cfg.queueWait, cfg.purchaseTimeout))
	}
	return cfg, errors.Join(errs...)
}

// The HTTP server's time limits, and what a purchase's answer needs of the write timeout.
// Go's http.Server counts WriteTimeout from the end of a request's headers (HTTP/1.x, see
// net/http's conn.readRequest); the purchase's deadline starts later, once the handler has
// read the body (bounded by ReadTimeout, counted from the request's first byte) and the rate
// limiter has answered. A purchase then answers within PURCHASE_TIMEOUT + order.AfterDeadline.
const (
	readHeaderTimeout  = 5 * time.Second
	readTimeout        = 10 * time.Second
	limiterWait        = 2 * time.Second // the limiter's batch in flight, then its own (httpapi's checkTimeout, 1s, each)
	writeMargin        = 3 * time.Second // writing the answer, and the scheduler
	maxPurchaseTimeout = 15 * time.Second
)

// orDerived parses text, a duration setting whose empty value means derived.
func orDerived(text string, derived time.Duration) (time.Duration, error) {
	if text == "" {
		return derived, nil
	}
	return time.ParseDuration(text)
}

// answerBudget is the write timeout a purchase with deadline purchaseTimeout needs, so that
// its answer, a committed 201 above all, reaches the client: WRITE_TIMEOUT's default, and
// its least value.
func answerBudget(purchaseTimeout time.Duration) time.Duration {
	return readTimeout + limiterWait + purchaseTimeout + order.AfterDeadline + writeMargin
}

// isLoopback reports whether addr is a host:port that only this machine reaches: localhost, or
// a loopback IP. An empty host (":6060") listens on every interface and is not.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
