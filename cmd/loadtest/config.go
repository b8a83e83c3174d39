package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// strategies are the purchase strategies of the API, in the order compare runs them.
var strategies = []string{"dlock", "naive", "pessimistic", "optimistic", "redis"}

// isSafe reports whether strategy promises never to oversell: every one but naive.
func isSafe(strategy string) bool { return strategy != "naive" }

// config is one invocation of the load tester: the scenario, where to send it, and where to
// audit and report it.
type config struct {
	cmd         string
	targets     []string
	adminToken  string
	strategy    string   // run
	strategies  []string // compare
	stock       int64
	thinkMS     int
	rate        int
	workers     int
	maxWorkers  int
	duration    time.Duration
	requests    uint64
	repeatShare float64
	firstUser   int64
	seed        uint64
	timeout     time.Duration
	afterSold   time.Duration
	progress    time.Duration
	wait        time.Duration
	runs        int
	baseline    bool
	expectNaive bool
	jsonPath    string
	plotPath    string
	resultsPath string
	databaseURL string
	redisAddr   string
	redisPrefix string
	meta        metaFlag
}

// usageError is a bad command line: main exits 2 for it.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// parseConfig reads the environment through getenv, then lets flags in args override it.
// args excludes the program name and the subcommand.
func parseConfig(cmd string, args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	env := func(key, def string) string {
		if v := getenv(key); v != "" {
			return v
		}
		return def
	}
	cfg := config{cmd: cmd}
	fs := flag.NewFlagSet("loadtest "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: loadtest %s [flags]\n\n%s\n\nflags:\n", cmd, commandHelp[cmd])
		fs.PrintDefaults()
	}
	targets := fs.String("targets", env("LOADTEST_TARGETS", "http://127.0.0.1:8080"),
		"comma-separated API base URLs; requests go round-robin (env LOADTEST_TARGETS)")
	fs.StringVar(&cfg.adminToken, "admin-token", getenv("ADMIN_TOKEN"), "bearer token of the admin routes (env ADMIN_TOKEN; prefer the env)")
	fs.StringVar(&cfg.strategy, "strategy", "dlock", "purchase strategy of the product (run): "+strings.Join(strategies, ", "))
	list := fs.String("strategies", strings.Join(strategies, ","), "strategies to compare, in order (compare)")
	fs.Int64Var(&cfg.stock, "stock", 100, "initial stock of the product")
	fs.IntVar(&cfg.thinkMS, "think-ms", 0, "think_ms of the product: work simulated inside the critical section")
	fs.IntVar(&cfg.rate, "rate", 0, "requests per second; 0 sends as fast as -workers allow (N users at once)")
	fs.IntVar(&cfg.workers, "workers", 64, "concurrent users (with -rate 0), or initial workers (with -rate > 0)")
	fs.IntVar(&cfg.maxWorkers, "max-workers", 1024, "most workers vegeta may add to hold -rate (ignored with -rate 0)")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "longest attack per product (at most 1h)")
	fs.Uint64Var(&cfg.requests, "requests", 1_000_000, "most requests per product")
	fs.Float64Var(&cfg.repeatShare, "repeat-share", 0.1, "share of requests, in [0,1), that reuse an earlier user id")
	fs.Int64Var(&cfg.firstUser, "first-user", 1, "first user id")
	fs.Uint64Var(&cfg.seed, "seed", 0, "seed of the repeat-buyer choice; 0 picks one from the clock (the report records it)")
	fs.DurationVar(&cfg.timeout, "timeout", 10*time.Second, "timeout of one request")
	fs.DurationVar(&cfg.afterSold, "after-soldout", 0, "stop the attack this long after the first sold_out answer; 0 keeps going to -duration or -requests")
	fs.DurationVar(&cfg.progress, "progress", time.Second, "interval of the progress line on stderr; 0 turns it off")
	fs.DurationVar(&cfg.wait, "wait", 30*time.Second, "how long to wait for every target's /readyz before attacking")
	fs.IntVar(&cfg.runs, "runs", 1, "repeat the whole comparison this many times and report medians (compare)")
	fs.BoolVar(&cfg.baseline, "baseline", cmd == "compare", "also measure sold-out rejection on a stock-0 product and a bare gin handler (compare)")
	fs.BoolVar(&cfg.expectNaive, "expect-naive-oversell", cmd == "compare",
		"fail when the naive strategy does not oversell (needs -think-ms > 0 and concurrency)")
	fs.StringVar(&cfg.jsonPath, "json", "", "write the report as JSON to this file")
	fs.StringVar(&cfg.plotPath, "plot", "", "write an HTML latency plot, one series per outcome, to this file")
	fs.StringVar(&cfg.resultsPath, "results", "", "write vegeta's binary results to this file, for the vegeta CLI (vegeta report FILE)")
	fs.StringVar(&cfg.databaseURL, "database-url",
		env("DATABASE_URL", "postgres://seckill:seckill@127.0.0.1:5432/seckill?sslmode=disable"),
		"PostgreSQL the API uses, audited directly; empty skips that audit (env DATABASE_URL)")
	fs.StringVar(&cfg.redisAddr, "redis-addr", env("REDIS_ADDR", "127.0.0.1:6379"),
		"Redis the API uses, audited directly for the redis strategy: host:port, or a comma-separated list of Redis Cluster nodes; empty skips (env REDIS_ADDR)")
	fs.StringVar(&cfg.redisPrefix, "redis-prefix", env("REDIS_KEY_PREFIX", "seckill"), "REDIS_KEY_PREFIX of the API (env REDIS_KEY_PREFIX)")
	fs.Var(&cfg.meta, "meta", "key=value recorded in the JSON report (repeatable; bench records machine and versions)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, usageError{err}
	}
	if fs.NArg() > 0 {
		return cfg, usageError{fmt.Errorf("unexpected arguments: %v", fs.Args())}
	}
	for _, t := range strings.Split(*targets, ",") {
		if t = strings.TrimRight(strings.TrimSpace(t), "/"); t != "" {
			cfg.targets = append(cfg.targets, t)
		}
	}
	for _, s := range strings.Split(*list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			cfg.strategies = append(cfg.strategies, s)
		}
	}
	if cfg.seed == 0 {
		cfg.seed = uint64(time.Now().UnixNano())
	}
	if err := cfg.validate(); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

func (c *config) validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(c.targets) == 0 {
		bad("-targets: want at least one API base URL")
	}
	for _, t := range c.targets {
		if u, err := url.Parse(t); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("-targets: %q is not an http(s) base URL", t)
		}
	}
	if !slices.Contains(strategies, c.strategy) {
		bad("-strategy %q: want one of %s", c.strategy, strings.Join(strategies, ", "))
	}
	if len(c.strategies) == 0 {
		bad("-strategies: want at least one")
	}
	for _, s := range c.strategies {
		if !slices.Contains(strategies, s) {
			bad("-strategies: %q is not one of %s", s, strings.Join(strategies, ", "))
		}
	}
	if c.stock < 0 || c.stock > 100_000_000 {
		bad("-stock %d: want 0 to 100000000", c.stock)
	}
	if c.thinkMS < 0 || c.thinkMS > 10_000 {
		bad("-think-ms %d: want 0 to 10000", c.thinkMS)
	}
	if c.rate < 0 {
		bad("-rate %d: want 0 (as fast as the workers go) or more", c.rate)
	}
	if c.workers < 1 || c.workers > 100_000 {
		bad("-workers %d: want 1 to 100000", c.workers)
	}
	if c.maxWorkers < c.workers && c.rate > 0 {
		c.maxWorkers = c.workers
	}
	if c.duration <= 0 || c.duration > time.Hour {
		bad("-duration %s: want more than 0 and at most 1h: every attack is bounded", c.duration)
	}
	if c.requests < 1 {
		bad("-requests %d: want at least 1: every attack is bounded", c.requests)
	}
	if c.repeatShare < 0 || c.repeatShare >= 1 {
		bad("-repeat-share %v: want a fraction in [0,1)", c.repeatShare)
	}
	if c.firstUser < 1 {
		bad("-first-user %d: user ids start at 1", c.firstUser)
	}
	if c.timeout <= 0 {
		bad("-timeout %s: want more than 0", c.timeout)
	}
	if c.afterSold < 0 || c.progress < 0 || c.wait < 0 {
		bad("-after-soldout, -progress and -wait cannot be negative")
	}
	if c.runs < 1 || c.runs > 100 {
		bad("-runs %d: want 1 to 100", c.runs)
	}
	if c.adminToken == "" {
		bad("no admin token: set ADMIN_TOKEN (or -admin-token) to the API's ADMIN_TOKEN; products and audits need it")
	}
	return errors.Join(errs...)
}

// scenario is the part of config that shapes the load, as recorded in the reports.
type scenario struct {
	Targets      []string      `json:"targets"`
	Stock        int64         `json:"stock"`
	ThinkMS      int           `json:"think_ms"`
	Rate         int           `json:"rate"`
	Workers      int           `json:"workers"`
	MaxWorkers   int           `json:"max_workers,omitempty"`
	Duration     time.Duration `json:"duration_ns"`
	Requests     uint64        `json:"max_requests"`
	RepeatShare  float64       `json:"repeat_share"`
	Seed         uint64        `json:"seed"`
	Timeout      time.Duration `json:"timeout_ns"`
	AfterSoldOut time.Duration `json:"after_soldout_ns"`
	LoadgenCPUs  int           `json:"loadgen_gomaxprocs"`
}

func (c *config) scenario() scenario {
	s := scenario{
		Targets: c.targets, Stock: c.stock, ThinkMS: c.thinkMS, Rate: c.rate, Workers: c.workers,
		Duration: c.duration, Requests: c.requests, RepeatShare: c.repeatShare, Seed: c.seed,
		Timeout: c.timeout, AfterSoldOut: c.afterSold, LoadgenCPUs: runtime.GOMAXPROCS(0),
	}
	if c.rate > 0 {
		s.MaxWorkers = c.maxWorkers
	}
	return s
}

// describe is the scenario in one line, for the text reports.
func (s scenario) describe() string {
	pace := fmt.Sprintf("%d users at once", s.Workers)
	if s.Rate > 0 {
		pace = fmt.Sprintf("%d req/s (%d-%d workers)", s.Rate, s.Workers, s.MaxWorkers)
	}
	stop := ""
	if s.AfterSoldOut > 0 {
		stop = fmt.Sprintf(", stop %s after sold out", s.AfterSoldOut)
	}
	return fmt.Sprintf("stock %d, think %d ms, %s, at most %s or %d requests%s, repeat share %s, %d API target(s)",
		s.Stock, s.ThinkMS, pace, s.Duration, s.Requests, stop, strconv.FormatFloat(s.RepeatShare, 'f', -1, 64), len(s.Targets))
}

// metaFlag collects repeated -meta key=value flags, in order.
type metaFlag [][2]string

func (m *metaFlag) String() string { return fmt.Sprint([][2]string(*m)) }

func (m *metaFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	*m = append(*m, [2]string{k, val})
	return nil
}

// object returns the pairs as a map for the JSON report.
func (m metaFlag) object() map[string]string {
	if len(m) == 0 {
		return nil
	}
	o := make(map[string]string, len(m))
	for _, kv := range m {
		o[kv[0]] = kv[1]
	}
	return o
}
