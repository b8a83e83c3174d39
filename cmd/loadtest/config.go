package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/seckill/seckill/internal/envflag"
)

// strategies are the purchase strategies of the API, in the order compare runs them by
// default; fairStrategy is also accepted: a fair dlock product (docs/dlock.md, "The fair lock").
var strategies = []string{"dlock", "naive", "pessimistic", "optimistic", "redis", queueStrategy}

const fairStrategy = "dlock-fair"

// Lock backends compare can set side by side (-etcd-targets): where an API process takes the
// dlock strategy's product locks, which its LOCK_BACKEND chooses.
const (
	backendRedis = "redis"
	backendEtcd  = "etcd"
)

// isSafe reports whether strategy promises never to oversell: every one but naive.
func isSafe(strategy string) bool { return strategy != "naive" }

// config is one invocation of an attacking command (run, compare, baseline): the scenario,
// where to send it, and where to audit and report it.
type config struct {
	cmd         string
	targets     []string
	etcdTargets []string // compare's -etcd-targets: APIs with LOCK_BACKEND=etcd, for a second dlock item
	adminToken  string
	strategies  []string // the strategies to attack, in order: one for run, none for baseline
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
	baseline    bool // also measure sold-out rejection: a stock-0 product and the ceiling
	expectNaive bool
	jsonPath    string
	plotPath    string
	resultsPath string
	databaseURL string
	redisAddr   string
	redisPrefix string
	meta        metaFlag
	// flags are the flags set on the command line, as recorded in the JSON report.
	flags []string

	targetList     string // -targets, split into targets by finish
	etcdTargetList string // -etcd-targets, split into etcdTargets by finish
	strategyFlag   string // the flag that names the strategies, for the messages of validate
}

// item is one attack of a round: a fresh product of strategy, sold by targets.
type item struct {
	name     string
	strategy string
	// backend is where targets take the product's lock, when the run compares lock backends
	// (backendRedis or backendEtcd); empty otherwise.
	backend string
	targets []string
}

// items are the attacks of one round, in order: one per strategy on the targets; with
// -etcd-targets, dlock twice, on the targets ("dlock (redis)") and then on the etcd targets
// ("dlock (etcd)"), so that the two are measured back to back in every round.
func (c *config) items() []item {
	items := make([]item, 0, len(c.strategies)+1)
	for _, s := range c.strategies {
		if s != "dlock" || len(c.etcdTargets) == 0 {
			items = append(items, item{name: s, strategy: s, targets: c.targets})
			continue
		}
		items = append(items,
			item{name: backendItemName(s, backendRedis), strategy: s, backend: backendRedis, targets: c.targets},
			item{name: backendItemName(s, backendEtcd), strategy: s, backend: backendEtcd, targets: c.etcdTargets})
	}
	return items
}

// backendItemName names the item of strategy on a lock backend: "dlock (etcd)".
func backendItemName(strategy, backend string) string { return strategy + " (" + backend + ")" }

// usageError is a bad command line: main exits 2 for it.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// attackFlags returns the flag set of command cmd with the flags every attacking command
// shares, bound to c, their defaults read through getenv. -h prints help above the flags.
// The command adds its own flags, parses with parseFlags, sets what they imply, then calls
// finish.
func (c *config) attackFlags(cmd, help string, getenv func(string) string, stderr io.Writer) *flag.FlagSet {
	c.cmd = cmd
	fs := newFlagSet(cmd, "[flags]", help, stderr)
	e := envflag.New(fs, getenv)
	e.StringVar(&c.targetList, "targets", "LOADTEST_TARGETS", "http://127.0.0.1:8080",
		"comma-separated API base URLs; requests go round-robin (env LOADTEST_TARGETS)")
	e.QuietVar(&c.adminToken, "admin-token", "ADMIN_TOKEN", "", "bearer token of the admin routes (env ADMIN_TOKEN; prefer the env, argv is visible to ps)")
	fs.Int64Var(&c.stock, "stock", 100, "initial stock of the product")
	fs.IntVar(&c.thinkMS, "think-ms", 0, "think_ms of the product: work simulated inside the critical section")
	fs.IntVar(&c.rate, "rate", 0, "requests per second; 0 sends as fast as -workers allow (N users at once)")
	fs.IntVar(&c.workers, "workers", 64, "concurrent users (with -rate 0), or initial workers (with -rate > 0)")
	fs.IntVar(&c.maxWorkers, "max-workers", 1024, "most workers vegeta may add to hold -rate (ignored with -rate 0)")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "longest attack per product (at most 1h)")
	fs.Uint64Var(&c.requests, "requests", 1_000_000, "most requests per product")
	fs.Float64Var(&c.repeatShare, "repeat-share", 0.1, "share of requests, in [0,1), that reuse an earlier user id")
	fs.Int64Var(&c.firstUser, "first-user", 1, "first user id")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of the repeat-buyer choice; 0 picks one from the clock (the report records it)")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "timeout of one request")
	fs.DurationVar(&c.afterSold, "after-soldout", 0, "stop the attack this long after the first sold_out answer; 0 keeps going to -duration or -requests")
	fs.DurationVar(&c.progress, "progress", time.Second, "interval of the progress line on stderr; 0 turns it off")
	fs.DurationVar(&c.wait, "wait", 30*time.Second, "how long to wait for every target's /readyz before attacking")
	fs.IntVar(&c.runs, "runs", 1, "repeat everything this many times and report medians")
	fs.StringVar(&c.jsonPath, "json", "", "write the report as JSON to this file")
	fs.StringVar(&c.plotPath, "plot", "", "write an HTML latency plot, one series per outcome, to this file")
	fs.StringVar(&c.resultsPath, "results", "", "write vegeta's binary results to this file, for the vegeta CLI (vegeta report FILE)")
	e.QuietVar(&c.databaseURL, "database-url", "DATABASE_URL", "postgres://seckill:seckill@127.0.0.1:5432/seckill?sslmode=disable",
		"PostgreSQL the API uses, audited directly; empty skips the direct audit (env DATABASE_URL; default postgres://seckill:...@127.0.0.1:5432/seckill?sslmode=disable)")
	e.StringVar(&c.redisAddr, "redis-addr", "REDIS_ADDR", "127.0.0.1:6379",
		"Redis the API uses, where the direct audit reads the redis strategy's gate: host:port, or a comma-separated list of Redis Cluster nodes; empty skips (env REDIS_ADDR)")
	e.StringVar(&c.redisPrefix, "redis-prefix", "REDIS_KEY_PREFIX", "seckill", "REDIS_KEY_PREFIX of the API (env REDIS_KEY_PREFIX)")
	fs.Var(&c.meta, "meta", "key=value recorded in the JSON report (repeatable: what the report cannot know, such as the API's settings)")
	return fs
}

// newFlagSet returns the flag set of command cmd, whose -h prints the synopsis, help and the
// flags to stderr.
func newFlagSet(cmd, synopsis, help string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("loadtest "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: loadtest %s %s\n\n%s\n\nflags:\n", cmd, synopsis, help)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args with fs and wants no argument after the flags. A bad command line
// is a usageError; -h is flag.ErrHelp.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected arguments: %v", fs.Args())}
	}
	return nil
}

// parseArgs parses args with fs, leaving the arguments after the flags in fs.Args(). A bad
// command line is a usageError; -h is flag.ErrHelp.
func parseArgs(fs *flag.FlagSet, args []string) error {
	err := fs.Parse(args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return usageError{err}
}

// finish completes c after fs parsed the command line: the targets, the seed, the flags for
// the report; then validates it.
func (c *config) finish(fs *flag.FlagSet) error {
	c.targets, c.etcdTargets = baseURLs(c.targetList), baseURLs(c.etcdTargetList)
	if c.seed == 0 {
		c.seed = uint64(time.Now().UnixNano())
	}
	c.flags = c.recordedFlags(fs)
	if err := c.validate(); err != nil {
		return usageError{err}
	}
	return nil
}

// baseURLs splits a comma-separated list of base URLs, without their trailing slashes.
func baseURLs(list string) []string {
	urls := splitList(list)
	for i, u := range urls {
		urls[i] = strings.TrimRight(u, "/")
	}
	return urls
}

// baseURL parses s, an API's base URL given by flag: http or https, with a host.
func baseURL(flag, s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s: %q is not an http(s) base URL", flag, s)
	}
	return u, nil
}

// splitList splits a comma-separated list, trimming spaces and dropping empty items.
func splitList(list string) []string {
	var items []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			items = append(items, s)
		}
	}
	return items
}

// recordedFlags lists the flags set on the command line as -name=value, in lexical order:
// those that shape the run, for the JSON report. The output files and -meta (recorded on its
// own) are left out; the admin token and the database password are redacted.
func (c *config) recordedFlags(fs *flag.FlagSet) []string {
	var flags []string
	fs.Visit(func(f *flag.Flag) {
		v := f.Value.String()
		switch f.Name {
		case "json", "plot", "results", "meta":
			return
		case "admin-token":
			v = "REDACTED"
		case "database-url":
			v = "REDACTED"
			if u, err := url.Parse(c.databaseURL); err == nil {
				v = u.Redacted()
			}
		}
		flags = append(flags, "-"+f.Name+"="+v)
	})
	return flags
}

func (c *config) validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(c.targets) == 0 {
		bad("-targets: want at least one API base URL")
	}
	for _, f := range []struct {
		name    string
		targets []string
	}{{"-targets", c.targets}, {"-etcd-targets", c.etcdTargets}} {
		for _, t := range f.targets {
			if _, err := baseURL(f.name, t); err != nil {
				bad("%v", err)
			}
		}
	}
	for _, t := range c.etcdTargets {
		if slices.Contains(c.targets, t) {
			bad("-etcd-targets: %s is also in -targets: an API takes its locks in Redis or in etcd, not both", t)
		}
	}
	if len(c.etcdTargets) > 0 && !slices.Contains(c.strategies, "dlock") {
		bad("-etcd-targets: runs the dlock strategy on etcd beside dlock on -targets: add dlock to %s", c.strategyFlag)
	}
	if c.strategyFlag != "" && len(c.strategies) == 0 {
		bad("%s: want at least one", c.strategyFlag)
	}
	for _, s := range c.strategies {
		if !slices.Contains(strategies, s) && s != fairStrategy {
			bad("%s %q: want one of %s, %s", c.strategyFlag, s, strings.Join(strategies, ", "), fairStrategy)
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
