package loadgen

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/seckill/seckill/internal/labrun"
	"github.com/seckill/seckill/internal/procs"
)

// LabConfig is one run of loadtest lab.
type LabConfig struct {
	Cells []labrun.Pair
	// APIBin is the lab build of cmd/api the cells run on; empty: FindLabAPI's.
	APIBin        string
	DatabaseURL   string // the processes' PostgreSQL, which the audit reads too
	RedisAddr     string // the processes' Redis, and the lab's locks'
	Prefix        string // the processes' REDIS_KEY_PREFIX; empty: labrun picks one
	EtcdEndpoints string // the processes' ETCD_ENDPOINTS
	JSONPath      string // the cells, with their samples, as JSON; empty: none
	ReportPath    string // the self-contained HTML report; empty: none
	// HistoryDir receives the checker's pages; empty: beside ReportPath, else under $TMPDIR.
	HistoryDir string
	Quiet      bool // no live progress line on stderr
}

// RunLab runs job's cells, telling watch if not nil, and writes the matrix.
func RunLab(ctx context.Context, job LabConfig, watch labrun.Watcher, stdout, stderr io.Writer) error {
	sqlDB, err := openPostgres(job.DatabaseURL, 4)
	if err != nil {
		return fmt.Errorf("lab: PostgreSQL: %w", err)
	}
	defer sqlDB.Close()
	rdb := redis.NewClient(&redis.Options{Addr: job.RedisAddr})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("lab: Redis %s: %w", job.RedisAddr, err)
	}
	if slices.ContainsFunc(job.Cells, func(p labrun.Pair) bool { return p.Lock == "etcd" }) {
		if err := pingEtcd(ctx, job.EtcdEndpoints); err != nil {
			return fmt.Errorf("lab: etcd %s, which the etcd lock needs (make up starts one; else set ETCD_ENDPOINTS): %w", job.EtcdEndpoints, err)
		}
	}
	if slices.ContainsFunc(job.Cells, func(p labrun.Pair) bool { return strings.HasPrefix(p.Lock, "zookeeper") }) {
		if _, _, err := procs.ZooKeeperJava(); err != nil {
			return fmt.Errorf("lab: the zookeeper cells start a ZooKeeper ensemble of their own: %w", err)
		}
	}
	if slices.ContainsFunc(job.Cells, func(p labrun.Pair) bool { return p.Scenario == "failover" && !strings.HasPrefix(p.Lock, "zookeeper") }) {
		if _, err := exec.LookPath("redis-server"); err != nil {
			return fmt.Errorf("lab: the failover cells start a Redis Sentinel deployment of their own, and redis-server is not on PATH " +
				"(Debian's redis-server package has it; or leave them out with -scenarios)")
		}
	}
	if job.HistoryDir == "" && job.ReportPath != "" {
		job.HistoryDir = strings.TrimSuffix(job.ReportPath, filepath.Ext(job.ReportPath)) + "-history"
	}
	if job.APIBin == "" {
		bin, cleanup, err := FindLabAPI()
		if err != nil {
			return fmt.Errorf("lab: %w", err)
		}
		defer cleanup()
		job.APIBin = bin
	}
	cfg := labrun.Config{Cells: job.Cells, APIBin: job.APIBin, DatabaseURL: job.DatabaseURL, RedisAddr: job.RedisAddr, Prefix: job.Prefix,
		EtcdEndpoints: job.EtcdEndpoints, DB: sqlDB, Redis: rdb, HistoryDir: job.HistoryDir,
		Logf: func(f string, a ...any) { fmt.Fprintf(stderr, f+"\n", a...) }, Watch: watch}
	if !job.Quiet {
		cfg.Progress = stderr
	}
	res, err := labrun.Run(ctx, cfg)
	labrun.WriteMatrix(stdout, res)
	if werr := writeLabFiles(res, job.JSONPath, job.ReportPath); werr != nil && err == nil {
		err = werr
	}
	switch {
	case err != nil:
		return fmt.Errorf("lab: %w", err)
	case !res.OK():
		return fmt.Errorf("lab: a cell did not come out as expected: %w", ErrAuditFailed)
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

// LabCells returns the cells locks and scenarios select (empty: all); an unknown name is an error.
func LabCells(locks, scenarios string, short bool) ([]labrun.Pair, error) {
	names := ScenarioNames()
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

// ScenarioNames returns the names of the lab's scenarios, in order.
func ScenarioNames() []string {
	var names []string
	for _, s := range labrun.Scenarios {
		names = append(names, s.Name)
	}
	return names
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
