package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/seckill/seckill/internal/envflag"
	"github.com/seckill/seckill/internal/labrun"
	"github.com/seckill/seckill/internal/loadgen"
)

var labHelp = `Run the oversell lab (docs/lab.md): every lab lock in every scenario, each cell a fresh
product of strategy lab sold by three API processes this command starts (the lab build of
cmd/api: -api, else labapi beside this binary, as make build puts bin/labapi beside
bin/loadtest, else built with the go command from the checkout it runs in) to many more
buyers than its stock, with the
scenario's real fault, then audited from PostgreSQL. Each cell is safe, oversold N (orders
the stock does not account for) or stalled (the sale stopped with stock left; the stuck
key is named), and is compared with the result written down for it. Each cell's lock
history (every grant, write, loss and release of its lock, as the processes record it with
LOCK_HISTORY) is checked for linearizability against a fenced mutex: illegal where two
holders wrote (every cell expected to oversell), linearizable elsewhere.

Exit status 0 when every cell came out as expected, 3 when one did not: a safe lock that
oversold, or a broken lock whose flaw did not show (the scenario proved nothing).

  locks:     ` + strings.Join(labrun.Locks, " ") + `
  scenarios: ` + strings.Join(loadgen.ScenarioNames(), " ") + `

The failover scenario starts a Redis Sentinel deployment of its own for each cell (redis-server
on PATH). The zookeeper locks' cells start a three-member ZooKeeper ensemble of their own
(Debian's zookeeper), whose leader their failover cell kills. The partition scenario runs the
three processes in network namespaces of their own, which needs root, ip (iproute2) and nft
(nftables); without them it is left out of the default selection, and a cell of it asked for
by name reports why it could not run.`

// cmdLab runs the lab's matrix.
func cmdLab(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	job, err := labConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	return loadgen.RunLab(ctx, job, nil, stdout, stderr)
}

// labConfig reads lab's command line.
func labConfig(args []string, getenv func(string) string, stderr io.Writer) (loadgen.LabConfig, error) {
	var j loadgen.LabConfig
	fs := labFlags(&j, getenv, stderr)
	locks := fs.String("locks", "", "comma-separated locks to run; default all")
	scenarios := fs.String("scenarios", "", "comma-separated scenarios to run; default all")
	short := fs.Bool("short", false, "the short matrix of make test: each lock's defining flaw once, dlock everywhere (-locks and -scenarios filter it)")
	if err := parseArgs(fs, args); err != nil {
		return j, err
	}
	if *scenarios == "" {
		if err := labrun.PartitionSupported(); err != nil {
			*scenarios = strings.Join(slices.DeleteFunc(loadgen.ScenarioNames(), func(s string) bool { return s == "partition" }), ",")
			fmt.Fprintf(stderr, "lab: the partition scenario is left out: %v\n", err)
		}
	}
	cells, err := loadgen.LabCells(*locks, *scenarios, *short)
	if err != nil {
		return j, loadgen.UsageError{Err: err}
	}
	j.Cells = cells
	return j, nil
}

// labFlags returns lab's flag set with the flags of what its cells run on and where it
// writes, bound to j, their defaults read through getenv (loadtest ui starts its lab runs
// from them).
func labFlags(j *loadgen.LabConfig, getenv func(string) string, stderr io.Writer) *flag.FlagSet {
	fs := newFlagSet("lab", "[flags]", labHelp, stderr)
	e := envflag.New(fs, getenv)
	e.QuietVar(&j.DatabaseURL, "database-url", "DATABASE_URL", "postgres://seckill:seckill@127.0.0.1:5432/seckill?sslmode=disable",
		"PostgreSQL for the API processes and the audit (env DATABASE_URL)")
	e.StringVar(&j.RedisAddr, "redis-addr", "REDIS_ADDR", "127.0.0.1:6379", "Redis for the API processes and the lab's locks (env REDIS_ADDR)")
	e.StringVar(&j.EtcdEndpoints, "etcd-endpoints", "ETCD_ENDPOINTS", "http://127.0.0.1:2379",
		"comma-separated etcd endpoints for the API processes: the etcd lock's (env ETCD_ENDPOINTS)")
	e.StringVar(&j.APIBin, "api", "LAB_API", "", "the lab build of cmd/api to start (go build -tags lab ./cmd/api); "+
		"default: labapi beside this binary, else built with the go command from this checkout (env LAB_API)")
	fs.StringVar(&j.Prefix, "redis-prefix", "", "REDIS_KEY_PREFIX of the API processes; default lab- and 8 random characters")
	fs.StringVar(&j.JSONPath, "json", "", "write the cells, with their samples, as JSON to this file")
	fs.StringVar(&j.ReportPath, "report", "", "write the self-contained HTML report (matrix and a chart per cell) to this file")
	fs.StringVar(&j.HistoryDir, "history-dir", "", "write the checker's page of each cell's lock history that is not linearizable to this directory; "+
		"default: next to -report (lab.html: lab-history/), else a new directory under $TMPDIR")
	fs.BoolVar(&j.Quiet, "quiet", false, "no live progress line on stderr")
	return fs
}
