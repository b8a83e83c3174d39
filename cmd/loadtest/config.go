package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"

	"github.com/seckill/seckill/internal/envflag"
	"github.com/seckill/seckill/internal/loadgen"
)

// attackConfig is the command line of an attacking command (run, compare, baseline): the
// engine's configuration, and the flags that fill it before finish completes it.
type attackConfig struct {
	loadgen.Config
	targetList     string // -targets, split into Targets by finish
	etcdTargetList string // -etcd-targets (compare), split into EtcdTargets by finish
	zkTargetList   string // -zookeeper-targets (compare), split into ZooKeeperTargets by finish

	gate gateArgs // -header and -tls-*, read into Deploy by finishGate (target.go)
}

// attackFlags returns the flag set of command cmd with the flags every attacking command
// shares, bound to c, their defaults those of loadgen.DefaultConfig or read through getenv.
// -h prints help above the flags. The command adds its own flags, parses with parseFlags,
// sets what they imply, then calls finish.
func (c *attackConfig) attackFlags(cmd, help string, getenv func(string) string, stderr io.Writer) *flag.FlagSet {
	d := loadgen.DefaultConfig()
	c.Cmd = cmd
	fs := newFlagSet(cmd, "[flags]", help, stderr)
	e := envflag.New(fs, getenv)
	e.StringVar(&c.targetList, "targets", "LOADTEST_TARGETS", "http://127.0.0.1:8080",
		"comma-separated API base URLs; requests go round-robin (env LOADTEST_TARGETS)")
	e.QuietVar(&c.AdminToken, "admin-token", "ADMIN_TOKEN", "", "bearer token of the admin routes (env ADMIN_TOKEN; prefer the env, argv is visible to ps)")
	fs.Int64Var(&c.Stock, "stock", d.Stock, "initial stock of the product")
	fs.IntVar(&c.ThinkMS, "think-ms", 0, "think_ms of the product: work simulated inside the critical section")
	// The load model (docs/loadtest.md, "Load models"); model.go resolves it after parsing.
	fs.StringVar(&c.Model, "model", "", "load model: open (arrivals on a schedule), closed (a pool of -workers) or opening (a crowd before starts_at, a burst at it); default: closed when -workers is given without -rate, else open")
	fs.IntVar(&c.Rate, "rate", d.Rate, "open: arrivals per second; closed (-model closed): the pool's pace, as wrk2 (0: as fast as answered)")
	fs.Var(&c.Stages, "stages", "open: piecewise-linear arrival rates, duration:rate,... such as 0s:0,2s:20000,30s:20000,5s:0 (sets the duration; empty: none)")
	fs.IntVar(&c.Workers, "workers", d.Workers, "closed: concurrent users (alone, it selects the closed model); open: workers to start with")
	fs.IntVar(&c.MaxWorkers, "max-workers", d.MaxWorkers, "open: most requests in flight; an arrival due beyond it waits and is reported as delayed")
	fs.DurationVar(&c.Duration, "duration", d.Duration, "longest attack per product (an opening: from T0)")
	fs.Uint64Var(&c.Requests, "requests", d.Requests, "most requests per product")
	fs.Float64Var(&c.RepeatShare, "repeat-share", d.RepeatShare, "share of requests, in [0,1), that reuse an earlier user id")
	fs.Int64Var(&c.FirstUser, "first-user", d.FirstUser, "first user id")
	fs.Uint64Var(&c.Seed, "seed", 0, "seed of the repeat-buyer choice; 0 picks one from the clock (the report records it)")
	fs.DurationVar(&c.Timeout, "timeout", d.Timeout, "timeout of one request; a request it cuts is an error, its latency counted as the timeout")
	fs.DurationVar(&c.AfterSoldOut, "after-soldout", 0, "stop the attack this long after the first sold_out answer; 0 keeps going to -duration or -requests")
	fs.DurationVar(&c.Progress, "progress", d.Progress, "interval of the progress line on stderr; 0 turns it off")
	fs.DurationVar(&c.Wait, "wait", d.Wait, "how long to wait for every target's /readyz before attacking")
	fs.IntVar(&c.Runs, "runs", d.Runs, "repeat everything this many times and report medians")
	fs.BoolVar(&c.Check, "check", false, "check the history of each product's purchases with a linearizability checker (porcupine); a safe strategy's must pass")
	fs.DurationVar(&c.CheckTimeout, "check-timeout", d.CheckTimeout, "longest search of one history (-check)")
	fs.StringVar(&c.JSONPath, "json", "", "write the report as JSON to this file")
	fs.StringVar(&c.PlotPath, "plot", "", "write an HTML latency plot, one series per outcome, to this file")
	fs.StringVar(&c.HistPath, "hist", "", "write the corrected latency distribution (HdrHistogram .hgrm, ms) to this file; one file per attack, named after it, when there are several")
	fs.StringVar(&c.CSVPath, "csv", "", "write one row per second of each attack (arrivals, answers by class, p50/p99, in flight) to this CSV file")
	fs.StringVar(&c.ResultsPath, "results", "", "write vegeta's binary results to this file, for the vegeta CLI (vegeta report FILE)")
	e.QuietVar(&c.DatabaseURL, "database-url", "DATABASE_URL", d.DatabaseURL,
		"PostgreSQL the API uses, audited directly; empty skips the direct audit (env DATABASE_URL; default postgres://seckill:...@127.0.0.1:5432/seckill?sslmode=disable)")
	e.StringVar(&c.RedisAddr, "redis-addr", "REDIS_ADDR", d.RedisAddr,
		"Redis the API uses, where the direct audit reads the redis strategy's gate: host:port, or a comma-separated list of Redis Cluster nodes; empty skips (env REDIS_ADDR)")
	e.StringVar(&c.RedisPrefix, "redis-prefix", "REDIS_KEY_PREFIX", d.RedisPrefix, "REDIS_KEY_PREFIX of the API (env REDIS_KEY_PREFIX)")
	fs.Var((*metaFlag)(&c.Meta), "meta", "key=value recorded in the JSON report (repeatable: what the report cannot know, such as the API's settings)")
	c.gateFlags(cmd, fs) // headers, TLS, -product, -audit, thresholds (target.go)

	// An abandonment sale (docs/loadtest.md, "Abandonment sales"; finishAbandon checks them).
	fs.DurationVar(&c.Abandon.PayWithin, "pay-within", 0, "abandonment sale: the product's payment window (pay_within_ms); each purchase is a reservation to pay within it, or its unit goes back on sale; 0: an ordinary sale")
	fs.Float64Var(&c.Abandon.PayRatio, "pay-ratio", d.Abandon.PayRatio, "abandonment sale: share of winners, in [0,1], who pay after a delay uniform in 0..-pay-delay")
	fs.Float64Var(&c.Abandon.CancelRatio, "cancel-ratio", 0, "abandonment sale: share of winners, in [0,1], who cancel after a delay uniform in 0..-pay-delay; the rest (1 - pay - cancel) walk away")
	fs.DurationVar(&c.Abandon.PayDelay, "pay-delay", d.Abandon.PayDelay, "abandonment sale: longest wait of a winner before paying or cancelling (uniform in 0..D); beyond -pay-within a payment is answered 409 order_expired")
	// An opening (docs/loadtest.md, "The opening"; -model opening).
	fs.DurationVar(&c.Opening.In, "opening-in", d.Opening.In, "opening: the product's starts_at, this long after its creation; the crowd arrives in it")
	fs.IntVar(&c.Opening.Burst, "burst", d.Opening.Burst, "opening: buyers, each sending one purchase from T0")
	fs.DurationVar(&c.Opening.Window, "burst-window", d.Opening.Window, "opening: the burst's purchases are due evenly over this window from T0 (sent on the clock, an open burst)")
	fs.Float64Var(&c.Opening.EarlyShare, "early-share", d.Opening.EarlyShare, "opening: share of the buyers, in [0,1], who hammer before T0 (then fire at T0 like the others)")
	fs.IntVar(&c.Opening.EarlyHits, "early-hits", d.Opening.EarlyHits, "opening: requests of each early buyer before T0 (with -line-rate: joins of the line, from the first instant)")
	fs.IntVar(&c.Opening.LineRate, "line-rate", d.Opening.LineRate, "opening: the product has a line calling this many places a second; every buyer joins it before T0 and follows its place from T0 (0: no line)")
	fs.DurationVar(&c.Opening.LineWindow, "line-window", d.Opening.LineWindow, "opening with -line-rate: how long a called place may buy")
	fs.IntVar(&c.Opening.LineTries, "line-tries", d.Opening.LineTries, "opening with -line-rate: purchases of each buyer from T0 at most")
	return fs
}

// finishAbandon refuses the abandonment sale's flags without -pay-within, and leaves out
// compare's baseline from an abandonment sale unless -baseline asks for it.
func (c *attackConfig) finishAbandon(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !c.Abandon.On() {
		for _, name := range []string{"pay-ratio", "pay-delay", "cancel-ratio"} {
			if set[name] {
				return loadgen.UsageError{Err: fmt.Errorf("-%s: only with -pay-within (an abandonment sale)", name)}
			}
		}
		return nil
	}
	if !set["baseline"] {
		c.Baseline = false
	}
	return nil
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
		return loadgen.UsageError{Err: fmt.Errorf("unexpected arguments: %v", fs.Args())}
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
	return loadgen.UsageError{Err: err}
}

// finish completes c after fs parsed the command line: the targets, the flags for the
// report, the ceiling's command (this executable, `loadtest ceiling`); then completes and
// validates it (loadgen.Config.Complete).
func (c *attackConfig) finish(fs *flag.FlagSet) error {
	c.Targets, c.EtcdTargets = loadgen.BaseURLs(c.targetList), loadgen.BaseURLs(c.etcdTargetList)
	c.ZooKeeperTargets = loadgen.BaseURLs(c.zkTargetList)
	c.Flags = c.recordedFlags(fs)
	c.resolveModel(fs)
	if err := c.finishOpening(fs); err != nil {
		return err
	}
	if err := c.finishAbandon(fs); err != nil {
		return err
	}
	if c.Baseline {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("ceiling: %w", err)
		}
		c.Ceiling = []string{exe, ceilingCommand}
	}
	if err := c.finishGate(fs); err != nil {
		return err
	}
	return c.Complete()
}

// recordedFlags lists the flags set on the command line as -name=value, in lexical order:
// those that shape the run, for the JSON report. The output files and -meta (recorded on its
// own) are left out; the admin token and the database password are redacted.
func (c *attackConfig) recordedFlags(fs *flag.FlagSet) []string {
	var flags []string
	fs.Visit(func(f *flag.Flag) {
		v := f.Value.String()
		switch f.Name {
		case "json", "plot", "results", "meta", "hist", "csv":
			return
		case "admin-token":
			v = "REDACTED"
		case "database-url":
			v = "REDACTED"
			if u, err := url.Parse(c.DatabaseURL); err == nil {
				v = u.Redacted()
			}
		}
		flags = append(flags, "-"+f.Name+"="+v)
	})
	return flags
}

// metaFlag collects repeated -meta key=value flags, in order.
type metaFlag loadgen.Meta

func (m *metaFlag) String() string { return fmt.Sprint([][2]string(*m)) }

func (m *metaFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	*m = append(*m, [2]string{k, val})
	return nil
}
