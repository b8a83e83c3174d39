package loadgen

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Strategies are the API's purchase strategies in compare's default order.
var Strategies = []string{"dlock", "naive", "pessimistic", "optimistic", "redis", QueueStrategy}

const FairStrategy = "dlock-fair"

// Lock backends compare can set side by side (LOCK_BACKEND).
const (
	BackendRedis     = "redis"
	BackendEtcd      = "etcd"
	BackendZooKeeper = "zookeeper"
)

// IsSafe reports whether strategy promises never to oversell: every one but naive.
func IsSafe(strategy string) bool { return strategy != "naive" }

// Config is one run, compare or baseline; start from DefaultConfig and call Complete before Execute.
type Config struct {
	Cmd         string   // the command, as the reports name it: run, compare or baseline
	Targets     []string // API base URLs; requests go round-robin
	EtcdTargets []string // compare's -etcd-targets: APIs with LOCK_BACKEND=etcd, for a second dlock item
	// ZooKeeperTargets are APIs with LOCK_BACKEND=zookeeper.
	ZooKeeperTargets []string
	AdminToken       string
	Strategies       []string // the strategies to attack, in order: one for run, none for baseline
	Stock            int64
	ThinkMS          int
	// Model is ModelOpen or ModelClosed (docs/loadtest.md#load-models); empty: open with a
	// Rate or Stages, else closed.
	Model       string
	Rate        int
	Stages      Stages
	Workers     int
	MaxWorkers  int
	Duration    time.Duration
	Requests    uint64
	RepeatShare float64
	FirstUser   int64
	Seed        uint64 // 0: Check picks one from the clock
	Timeout     time.Duration
	// AfterSoldOut stops an attack this long after the first sold_out answer; 0: never.
	AfterSoldOut time.Duration
	Progress     time.Duration // interval of the progress line on stderr; 0: none
	Wait         time.Duration // how long to wait for every target's /readyz
	Runs         int
	Baseline     bool // also measure sold-out rejection: a stock-0 product and the ceiling
	ExpectNaive  bool
	JSONPath     string
	PlotPath     string
	ResultsPath  string
	HistPath     string // -hist: the corrected latencies' percentile distribution (.hgrm)
	CSVPath      string // -csv: one row per second of each attack
	DatabaseURL  string // empty: no direct audit
	RedisAddr    string // empty: the direct audit reads no gate
	RedisPrefix  string
	Meta         Meta
	// Flags are the flags set on the command line, as recorded in the JSON report.
	Flags []string
	// Ceiling is the argv that serves a bare gin ceiling, printing its address, until stdin closes.
	Ceiling []string

	// Check runs the history checker on each product's purchases, bounded by CheckTimeout.
	Check        bool
	CheckTimeout time.Duration

	StrategyFlag string // the flag that names the strategies, for the messages of Validate

	// Deploy is how to reach the deployment; AuditMode which audits run (empty: AuditAuto);
	// Thresholds what fails with ErrThresholds.
	Deploy     Deployment
	AuditMode  string
	Thresholds Thresholds

	// Abandon makes each attack an abandonment sale (-pay-within, abandon.go).
	Abandon Abandon
	// Opening is each attack's opening with -model opening (opening.go).
	Opening Opening
}

// DefaultConfig returns the command line's defaults.
func DefaultConfig() Config {
	return Config{
		Strategies: slices.Clone(Strategies), Stock: 100, Rate: DefaultRate, Workers: 64, MaxWorkers: 1024, Duration: 10 * time.Second,
		Requests: 1_000_000, RepeatShare: 0.1, FirstUser: 1, Timeout: 10 * time.Second, Progress: time.Second,
		Wait: 30 * time.Second, Runs: 1, CheckTimeout: time.Minute,
		DatabaseURL: "postgres://seckill:seckill@127.0.0.1:5432/seckill?sslmode=disable",
		RedisAddr:   "127.0.0.1:6379", RedisPrefix: "seckill",
		Abandon: Abandon{PayRatio: 0.7, PayDelay: time.Second}, Opening: DefaultOpening(),
	}
}

// Complete fills in c's seed and validates it; a bad one is a UsageError.
func (c *Config) Complete() error {
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if err := c.Validate(); err != nil {
		return UsageError{Err: err}
	}
	return nil
}

// checkDir is where -check writes porcupine's page of a history that failed: beside the
// JSON report, else in a new directory under the system's temp dir ("").
func (c *Config) checkDir() string {
	if c.JSONPath == "" {
		return ""
	}
	return filepath.Dir(c.JSONPath)
}

// Item is one attack of a round: a fresh product of strategy, sold by targets.
type Item struct {
	Name     string
	Strategy string
	// Backend is the lock backend when comparing backends; empty otherwise.
	Backend string
	Targets []string
}

// Items returns one round's attacks: one per strategy, then dlock once per lock backend.
func (c *Config) Items() []Item {
	others := c.otherBackends()
	items := make([]Item, 0, len(c.Strategies)+len(others))
	for _, s := range c.Strategies {
		if s != "dlock" || len(others) == 0 {
			items = append(items, Item{Name: s, Strategy: s, Targets: c.Targets})
			continue
		}
		items = append(items, Item{Name: backendItemName(s, BackendRedis), Strategy: s, Backend: BackendRedis, Targets: c.Targets})
		for _, b := range others {
			items = append(items, Item{Name: backendItemName(s, b.backend), Strategy: s, Backend: b.backend, Targets: b.targets})
		}
	}
	return items
}

// backendTargets are the APIs of one lock backend other than Redis, and the flag naming them.
type backendTargets struct {
	backend, flag string
	targets       []string
}

// otherBackends are the lock backends beside Redis that c names targets of, in order.
func (c *Config) otherBackends() []backendTargets {
	var out []backendTargets
	for _, b := range []backendTargets{
		{BackendEtcd, "-etcd-targets", c.EtcdTargets},
		{BackendZooKeeper, "-zookeeper-targets", c.ZooKeeperTargets},
	} {
		if len(b.targets) > 0 {
			out = append(out, b)
		}
	}
	return out
}

// backendItemName names the item of strategy on a lock backend: "dlock (etcd)".
func backendItemName(strategy, backend string) string { return strategy + " (" + backend + ")" }

// UsageError is a bad configuration; cmd/loadtest exits 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// BaseURLs splits a comma-separated list of base URLs, without their trailing slashes.
func BaseURLs(list string) []string {
	urls := SplitList(list)
	for i, u := range urls {
		urls[i] = strings.TrimRight(u, "/")
	}
	return urls
}

// ParseBaseURL parses s, an API's base URL given by flag: http or https, with a host.
func ParseBaseURL(flag, s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s: %q is not an http(s) base URL", flag, s)
	}
	return u, nil
}

// SplitList splits a comma-separated list, trimming spaces and dropping empty items.
func SplitList(list string) []string {
	var items []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			items = append(items, s)
		}
	}
	return items
}

// Validate returns every fault of c; with a rate it raises MaxWorkers to Workers.
func (c *Config) Validate() error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(c.Targets) == 0 {
		bad("-targets: want at least one API base URL")
	}
	for _, t := range c.Targets {
		if _, err := ParseBaseURL("-targets", t); err != nil {
			bad("%v", err)
		}
	}
	seen := map[string]string{}
	for _, b := range c.otherBackends() {
		for _, t := range b.targets {
			if _, err := ParseBaseURL(b.flag, t); err != nil {
				bad("%v", err)
			}
			if slices.Contains(c.Targets, t) {
				bad("%s: %s is also in -targets: an API takes its locks in one store, Redis or %s, not both", b.flag, t, b.backend)
			} else if f, ok := seen[t]; ok {
				bad("%s: %s is also in %s: an API takes its locks in one store", b.flag, t, f)
			}
			seen[t] = b.flag
		}
		if !slices.Contains(c.Strategies, "dlock") {
			bad("%s: runs the dlock strategy on %s beside dlock on -targets: add dlock to %s", b.flag, b.backend, c.StrategyFlag)
		}
	}
	if c.StrategyFlag != "" && len(c.Strategies) == 0 {
		bad("%s: want at least one", c.StrategyFlag)
	}
	for _, s := range c.Strategies {
		if !slices.Contains(Strategies, s) && s != FairStrategy {
			bad("%s %q: want one of %s, %s", c.StrategyFlag, s, strings.Join(Strategies, ", "), FairStrategy)
		}
	}
	if c.Stock < 0 || c.Stock > 100_000_000 {
		bad("-stock %d: want 0 to 100000000", c.Stock)
	}
	if c.ThinkMS < 0 || c.ThinkMS > 10_000 {
		bad("-think-ms %d: want 0 to 10000", c.ThinkMS)
	}
	errs = append(errs, c.validateModel()...)
	if c.Requests < 1 {
		bad("-requests %d: want at least 1: every attack is bounded", c.Requests)
	}
	if c.RepeatShare < 0 || c.RepeatShare >= 1 {
		bad("-repeat-share %v: want a fraction in [0,1)", c.RepeatShare)
	}
	if c.FirstUser < 1 {
		bad("-first-user %d: user ids start at 1", c.FirstUser)
	}
	if c.Timeout <= 0 {
		bad("-timeout %s: want more than 0", c.Timeout)
	}
	if c.AfterSoldOut < 0 || c.Progress < 0 || c.Wait < 0 {
		bad("-after-soldout, -progress and -wait cannot be negative")
	}
	if c.CheckTimeout <= 0 {
		bad("-check-timeout %s: want more than 0", c.CheckTimeout)
	}
	if c.Runs < 1 || c.Runs > 100 {
		bad("-runs %d: want 1 to 100", c.Runs)
	}
	if c.AdminToken == "" {
		bad("no admin token: set ADMIN_TOKEN (or -admin-token) to the API's ADMIN_TOKEN; products and audits need it")
	}
	errs = append(errs, c.validateAbandon()...)
	return errors.Join(append(errs, c.validateGate())...)
}

// model is the load model of c: Model, or the one its Rate and Stages imply.
func (c *Config) model() string {
	if c.Model != "" {
		return c.Model
	}
	if c.Rate > 0 || len(c.Stages) > 0 {
		return ModelOpen
	}
	return ModelClosed
}

// validateModel validates the load model and its bounds; with stages, the duration is
// theirs. An open run's MaxWorkers is raised to Workers.
func (c *Config) validateModel() (errs []error) {
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	m := c.model()
	switch {
	case m == ModelOpening:
		errs = append(errs, c.validateOpening()...)
	case m != ModelOpen && m != ModelClosed:
		bad("-model %q: want %s, %s or %s", c.Model, ModelOpen, ModelClosed, ModelOpening)
	case m == ModelClosed && len(c.Stages) > 0:
		bad("-stages: an open model's arrivals; a closed run has -workers (and -rate)")
	case m == ModelOpen && c.Rate <= 0 && len(c.Stages) == 0:
		bad("-rate %d: an open run wants arrivals per second (-rate N) or -stages; -workers N alone is a closed pool", c.Rate)
	}
	if c.Rate < 0 || c.Rate > 10_000_000 {
		bad("-rate %d: want 0 to 10000000", c.Rate)
	}
	if c.Workers < 1 || c.Workers > 100_000 {
		bad("-workers %d: want 1 to 100000", c.Workers)
	}
	if m == ModelOpen || m == ModelOpening {
		c.MaxWorkers = max(c.MaxWorkers, c.Workers)
		if c.MaxWorkers > 1_000_000 {
			bad("-max-workers %d: want at most 1000000", c.MaxWorkers)
		}
	}
	if len(c.Stages) > 0 {
		c.Duration = c.Stages.Total()
	}
	// No cap but > 0: the latencies are HDR histograms, whose memory does not grow with the run.
	if c.Duration <= 0 {
		bad("-duration %s: want more than 0: every attack is bounded", c.Duration)
	}
	return errs
}
