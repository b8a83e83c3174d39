package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/seckill/seckill/internal/httpapi"
)

// minAdminToken is the fewest characters a non-empty ADMIN_TOKEN may have: a short token is
// guessed, and the admin routes create products and read audits.
const minAdminToken = 16

// config is everything cmd/api reads from the environment, each field overridable by a flag.
type config struct {
	addr            string
	databaseURL     string
	redis           redisNode   // REDIS_ADDR when it names one Redis
	redisCluster    []redisNode // REDIS_CLUSTER_ADDRS, or a REDIS_ADDR list: a cluster client (see redis.go)
	redlock         []redisNode // REDLOCK_ADDRS: product locks with Redlock over these masters
	adminToken      string
	redisPrefix     string
	logLevel        slog.Level
	dbMaxConns      int
	lockTTL         time.Duration
	lockWait        time.Duration
	batchMax        int
	batchLinger     time.Duration
	purchaseTimeout time.Duration
	pprofAddr       string
	shutdownTimeout time.Duration
	shutdownDelay   time.Duration
	startupTimeout  time.Duration
	migrate         bool
	rateLimits      httpapi.RateLimits
	version         bool // -version, no variable: print the build and exit
}

// parseConfig reads the environment through getenv, then lets flags in args override it.
// args excludes the program name and any subcommand.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	env := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	var cfg config
	fs := flag.NewFlagSet("api", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.addr, "addr", env("HTTP_ADDR", ":8080"), "listen address (env HTTP_ADDR)")
	// The settings that may hold a password or a token are quietVars: -h and a flag error
	// print every flag's default, which comes from the environment.
	quietVar(fs, &cfg.databaseURL, "database-url",
		env("DATABASE_URL", "postgres://seckill:seckill@127.0.0.1:5432/seckill?sslmode=disable"),
		"PostgreSQL `URL` (env DATABASE_URL; default postgres://seckill:...@127.0.0.1:5432/seckill?sslmode=disable)")
	var redisAddr, clusterAddrs, redlockAddrs string
	quietVar(fs, &redisAddr, "redis-addr", env("REDIS_ADDR", "127.0.0.1:6379"),
		"Redis `address`: host:port or redis[s]://[user:password@]host:port[/db] URL, or a comma-separated list of Redis Cluster nodes (env REDIS_ADDR; default 127.0.0.1:6379)")
	quietVar(fs, &clusterAddrs, "redis-cluster-addrs", getenv("REDIS_CLUSTER_ADDRS"), "comma-separated Redis Cluster `nodes` (host:port or URLs); overrides REDIS_ADDR (env REDIS_CLUSTER_ADDRS)")
	quietVar(fs, &redlockAddrs, "redlock-addrs", getenv("REDLOCK_ADDRS"), "comma-separated independent Redis `masters` (3 or more; host:port or URLs) for the product locks, with Redlock (env REDLOCK_ADDRS)")
	redisUser := fs.String("redis-username", getenv("REDIS_USERNAME"), "Redis ACL user for every Redis address whose URL names none (env REDIS_USERNAME; the password is REDIS_PASSWORD, which has no flag)")
	quietVar(fs, &cfg.adminToken, "admin-token", getenv("ADMIN_TOKEN"),
		"bearer `token` for admin routes, at least 16 characters; empty disables them (env ADMIN_TOKEN; prefer the env, argv is visible to ps)")
	fs.StringVar(&cfg.redisPrefix, "redis-prefix", env("REDIS_KEY_PREFIX", "seckill"), "namespace of every Redis key (env REDIS_KEY_PREFIX)")
	fs.StringVar(&cfg.pprofAddr, "pprof-addr", getenv("PPROF_ADDR"), "serve net/http/pprof on this loopback address, e.g. 127.0.0.1:6060; empty: off (env PPROF_ADDR)")
	level := fs.String("log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error (env LOG_LEVEL)")
	maxConns := fs.String("db-max-conns", env("DB_MAX_CONNS", "20"), "PostgreSQL pool size (env DB_MAX_CONNS)")
	lockTTL := fs.String("lock-ttl", env("LOCK_TTL", "2s"), "lease of a product lock; the watchdog renews it (env LOCK_TTL)")
	lockWait := fs.String("lock-wait", env("LOCK_WAIT", "1s"), "how long a buyer waits for a product lock before 503 busy (env LOCK_WAIT)")
	batchMax := fs.String("batch-max", env("BATCH_MAX", "128"), "most buyers one lock holder serves in one transaction; 1 disables batching (env BATCH_MAX)")
	batchLinger := fs.String("batch-linger", env("BATCH_LINGER", "0s"), "how long a lock holder waits for its batch to fill (env BATCH_LINGER)")
	purchaseTimeout := fs.String("purchase-timeout", env("PURCHASE_TIMEOUT", "10s"), "server-side deadline of one purchase, at most 15s (env PURCHASE_TIMEOUT)")
	shutdown := fs.String("shutdown-timeout", env("SHUTDOWN_TIMEOUT", "15s"), "how long SIGTERM waits for in-flight requests (env SHUTDOWN_TIMEOUT)")
	shutdownDelay := fs.String("shutdown-delay", env("SHUTDOWN_DELAY", "0s"), "on SIGTERM, answer /readyz 503 this long before closing the listener (env SHUTDOWN_DELAY)")
	startup := fs.String("startup-timeout", env("STARTUP_TIMEOUT", "60s"), "how long start-up waits for PostgreSQL (env STARTUP_TIMEOUT)")
	rateUser := fs.String("rate-limit-user", env("RATE_LIMIT_USER", "10/s"), "purchase attempts per user and product: N/s, N/m, N/h or off (env RATE_LIMIT_USER)")
	rateAddr := fs.String("rate-limit-addr", env("RATE_LIMIT_ADDR", "off"), "purchase attempts per client address: N/s, N/m, N/h or off (env RATE_LIMIT_ADDR)")
	fs.BoolVar(&cfg.migrate, "migrate", env("MIGRATE_ON_START", "true") == "true", "apply migrations at start (env MIGRATE_ON_START)")
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
	var errs []error
	// REDIS_PASSWORD has no flag: arguments are visible to ps.
	errs = append(errs, cfg.parseRedisTopology(redisAddr, clusterAddrs, redlockAddrs, *redisUser, getenv("REDIS_PASSWORD"))...)
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
	var err error
	if cfg.dbMaxConns, err = strconv.Atoi(*maxConns); err != nil || cfg.dbMaxConns < 1 {
		errs = append(errs, fmt.Errorf("DB_MAX_CONNS %q: want a positive integer", *maxConns))
	}
	if cfg.batchMax, err = strconv.Atoi(*batchMax); err != nil || cfg.batchMax < 1 || cfg.batchMax > 10000 {
		errs = append(errs, fmt.Errorf("BATCH_MAX %q: want an integer from 1 to 10000", *batchMax))
	}
	if cfg.rateLimits.User, err = httpapi.ParseRate(*rateUser); err != nil {
		errs = append(errs, fmt.Errorf("RATE_LIMIT_USER: %w", err))
	}
	if cfg.rateLimits.Addr, err = httpapi.ParseRate(*rateAddr); err != nil {
		errs = append(errs, fmt.Errorf("RATE_LIMIT_ADDR: %w", err))
	}
	durations := []struct {
		dst        *time.Duration
		name, text string
		min        time.Duration
	}{
		{&cfg.lockTTL, "LOCK_TTL", *lockTTL, 100 * time.Millisecond},
		{&cfg.lockWait, "LOCK_WAIT", *lockWait, time.Millisecond},
		{&cfg.batchLinger, "BATCH_LINGER", *batchLinger, 0},
		{&cfg.purchaseTimeout, "PURCHASE_TIMEOUT", *purchaseTimeout, 100 * time.Millisecond},
		{&cfg.shutdownTimeout, "SHUTDOWN_TIMEOUT", *shutdown, time.Millisecond},
		{&cfg.shutdownDelay, "SHUTDOWN_DELAY", *shutdownDelay, 0},
		{&cfg.startupTimeout, "STARTUP_TIMEOUT", *startup, time.Millisecond},
	}
	for _, d := range durations {
		if *d.dst, err = time.ParseDuration(d.text); err != nil || *d.dst < d.min {
			errs = append(errs, fmt.Errorf("%s %q: want a duration of at least %s, such as 2s", d.name, d.text, d.min))
		}
	}
	if cfg.purchaseTimeout > maxPurchaseTimeout {
		errs = append(errs, fmt.Errorf("PURCHASE_TIMEOUT %q: at most %s, so that every answer (deadline + 10s for COMMIT and its settling) fits in the %s write timeout",
			*purchaseTimeout, maxPurchaseTimeout, writeTimeout))
	}
	return cfg, errors.Join(errs...)
}

// writeTimeout is the HTTP server's limit on writing an answer; maxPurchaseTimeout keeps
// every purchase's answer inside it.
const (
	writeTimeout       = 30 * time.Second
	maxPurchaseTimeout = 15 * time.Second
)

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

// quietVar defines a string flag, like fs.StringVar, whose value the usage message never shows:
// it comes from the environment and may hold a password or a token.
func quietVar(fs *flag.FlagSet, p *string, name, value, usage string) {
	*p = value
	fs.Var(quietString{p}, name, usage)
}

// quietString is a string flag.Value whose String is empty, so flag prints no default.
type quietString struct{ p *string }

func (q quietString) String() string { return "" }

func (q quietString) Set(v string) error {
	*q.p = v
	return nil
}
