package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/envflag"
	"github.com/seckill/seckill/internal/labrun"
)

const labHelp = `Run the oversell lab (docs/lab.md): every lab lock in every scenario, each cell a fresh
product of strategy lab sold by three API processes this command starts (cmd/api, built
with the go command from this checkout) to many more buyers than its stock, with the
scenario's real fault, then audited from PostgreSQL. Each cell is safe, oversold N (orders
the stock does not account for) or stalled (the sale stopped with stock left; the stuck
key is named), and is compared with the result written down for it.

Exit status 0 when every cell came out as expected, 3 when one did not: a safe lock that
oversold, or a broken lock whose flaw did not show (the scenario proved nothing).

  locks:     ` + "none mutex setnx setnx-expire del lease watchdog dlock redsync redislock etcd" + `
  scenarios: crowd long-work crash pause`

// cmdLab runs the lab's matrix.
func cmdLab(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	job, err := labConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	return runLab(ctx, job, nil, stdout, stderr)
}

// labJob is one invocation of lab: what to run and where to write it.
type labJob struct {
	cells                  []labrun.Pair
	dsn, redisAddr, prefix string
	etcdEndpoints          string // the processes' ETCD_ENDPOINTS
	jsonPath, reportPath   string
	quiet                  bool
}

// labConfig reads lab's command line (loadtest ui builds one for each lab run).
func labConfig(args []string, getenv func(string) string, stderr io.Writer) (labJob, error) {
	var j labJob
	fs := newFlagSet("lab", "[flags]", labHelp, stderr)
	e := envflag.New(fs, getenv)
	e.QuietVar(&j.dsn, "database-url", "DATABASE_URL", "postgres://seckill:seckill@127.0.0.1:5432/seckill?sslmode=disable",
		"PostgreSQL for the API processes and the audit (env DATABASE_URL)")
	e.StringVar(&j.redisAddr, "redis-addr", "REDIS_ADDR", "127.0.0.1:6379", "Redis for the API processes and the lab's locks (env REDIS_ADDR)")
	e.StringVar(&j.etcdEndpoints, "etcd-endpoints", "ETCD_ENDPOINTS", "http://127.0.0.1:2379",
		"comma-separated etcd endpoints for the API processes: the etcd lock's (env ETCD_ENDPOINTS)")
	fs.StringVar(&j.prefix, "redis-prefix", "", "REDIS_KEY_PREFIX of the API processes; default lab- and 8 random characters")
	locks := fs.String("locks", "", "comma-separated locks to run; default all")
	scenarios := fs.String("scenarios", "", "comma-separated scenarios to run; default all")
	short := fs.Bool("short", false, "the short matrix of make test: each lock's defining flaw once, dlock everywhere (-locks and -scenarios filter it)")
	fs.StringVar(&j.jsonPath, "json", "", "write the cells, with their samples, as JSON to this file")
	fs.StringVar(&j.reportPath, "report", "", "write the self-contained HTML report (matrix and a chart per cell) to this file")
	fs.BoolVar(&j.quiet, "quiet", false, "no live progress line on stderr")
	if err := parseArgs(fs, args); err != nil {
		return j, err
	}
	cells, err := labCells(*locks, *scenarios, *short)
	if err != nil {
		return j, usageError{err}
	}
	j.cells = cells
	return j, nil
}

// runLab runs job's cells, telling watch (when not nil) as they go, and writes the matrix
// to stdout and the files job names.
func runLab(ctx context.Context, job labJob, watch labrun.Watcher, stdout, stderr io.Writer) error {
	gdb, err := db.Open(job.dsn, db.PoolOptions{MaxOpen: 4})
	if err != nil {
		return fmt.Errorf("lab: PostgreSQL: %w", err)
	}
	sqlDB, _ := gdb.DB()
	defer sqlDB.Close()
	rdb := redis.NewClient(&redis.Options{Addr: job.redisAddr})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("lab: Redis %s: %w", job.redisAddr, err)
	}
	if slices.ContainsFunc(job.cells, func(p labrun.Pair) bool { return p.Lock == "etcd" }) {
		if err := pingEtcd(ctx, job.etcdEndpoints); err != nil {
			return fmt.Errorf("lab: etcd %s, which the etcd lock needs (make up starts one; else set ETCD_ENDPOINTS): %w", job.etcdEndpoints, err)
		}
	}
	cfg := labrun.Config{Cells: job.cells, DatabaseURL: job.dsn, RedisAddr: job.redisAddr, Prefix: job.prefix,
		EtcdEndpoints: job.etcdEndpoints, DB: sqlDB, Redis: rdb,
		Logf: func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }, Watch: watch}
	if !job.quiet {
		cfg.Progress = stderr
	}
	res, err := labrun.Run(ctx, cfg)
	labrun.WriteMatrix(stdout, res)
	if werr := writeLabFiles(res, job.jsonPath, job.reportPath); werr != nil && err == nil {
		err = werr
	}
	switch {
	case err != nil:
		return fmt.Errorf("lab: %w", err)
	case !res.OK():
		return fmt.Errorf("lab: a cell did not come out as expected: %w", errAuditFailed)
	}
	return nil
}

// pingEtcd reports whether the etcd at endpoints (comma-separated) serves a read within 3 s.
func pingEtcd(ctx context.Context, endpoints string) error {
	var eps []string
	for _, e := range strings.Split(endpoints, ",") {
		if e = strings.TrimSpace(e); e != "" {
			eps = append(eps, e)
		}
	}
	if len(eps) == 0 {
		return fmt.Errorf("no endpoint")
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 3 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err = cli.Get(ctx, "seckill/ping", clientv3.WithCountOnly())
	return err
}

// labCells is the cells the flags select.
func labCells(locks, scenarios string, short bool) ([]labrun.Pair, error) {
	var names []string
	for _, s := range labrun.Scenarios {
		names = append(names, s.Name)
	}
	ls, err := pick("-locks", locks, labrun.Locks)
	if err != nil {
		return nil, err
	}
	ss, err := pick("-scenarios", scenarios, names)
	if err != nil {
		return nil, err
	}
	cells := labrun.Cells(ls, ss)
	if short {
		cells = slices.DeleteFunc(labrun.ShortCells(), func(p labrun.Pair) bool {
			return !slices.Contains(ls, p.Lock) || !slices.Contains(ss, p.Scenario)
		})
	}
	if len(cells) == 0 {
		return nil, fmt.Errorf("no cell selected")
	}
	return cells, nil
}

// pick returns the comma-separated names in list, all of valid when list is empty.
func pick(flagName, list string, valid []string) ([]string, error) {
	if list == "" {
		return valid, nil
	}
	var out []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); !slices.Contains(valid, n) {
			return nil, fmt.Errorf("%s: no %q; want some of %s", flagName, n, strings.Join(valid, ","))
		}
		out = append(out, n)
	}
	return out, nil
}

// writeLabFiles writes the JSON and the HTML report, where asked.
func writeLabFiles(res labrun.Result, jsonPath, reportPath string) error {
	if jsonPath != "" {
		if err := writeJSON(jsonPath, res); err != nil {
			return err
		}
	}
	if reportPath != "" {
		f, err := os.Create(reportPath)
		if err != nil {
			return err
		}
		if err := labrun.WriteReport(f, res); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}
	return nil
}
