package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/labrun"
	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestCompareAgainstThreeAPIs is the CI run of the harness: three real API processes on one
// fresh PostgreSQL schema and Redis prefix, every strategy for a second or two each. It
// fails on any oversell, duplicate or inconsistency of a safe strategy, and when naive does
// not oversell (think_ms 10 with 24 buyers at once makes it oversell every time). With
// -check, each product's history must be linearizable, naive's illegal.
func TestCompareAgainstThreeAPIs(t *testing.T) {
	dsn, redisAddr, prefix := testenv.APIBackend(t)
	t.Parallel()
	const token = "ci-loadtest-admin-token"
	var targets []string
	for _, api := range servers.StartAPIs(t, 3, map[string]string{
		"DATABASE_URL": dsn, "REDIS_ADDR": redisAddr, "REDIS_KEY_PREFIX": prefix,
		"ADMIN_TOKEN": token, "LOG_LEVEL": "warn", "DB_MAX_CONNS": "10", "SHUTDOWN_TIMEOUT": "15s",
	}) {
		targets = append(targets, api.Base)
	}
	rep := compareOn(t, token, targets, dsn, "-redis-addr", redisAddr, "-redis-prefix", prefix, "-check")
	if rep.Machine.PostgreSQL == "" || rep.Machine.Redis == "" {
		t.Errorf("the report lacks the server versions: %+v", rep.Machine)
	}
	seen := map[string]bool{}
	for _, r := range rep.Rounds[0] {
		seen[r.Name] = true
		if r.Strategy == "" {
			continue // the bare gin baseline
		}
		if r.Audit == nil || r.Audit.Direct == nil {
			t.Errorf("%s: no direct audit", r.Name)
			continue
		}
		switch h := r.History; {
		case h == nil || !h.Resolved:
			t.Errorf("%s: history %+v, want one checked with PostgreSQL's orders", r.Name, h)
		case r.Strategy == "naive" && h.Verdict != history.Illegal, r.Strategy != "naive" && !h.Linearizable:
			t.Errorf("%s: history %s", r.Name, h)
		default:
			t.Logf("%s: history %s", r.Name, h)
		}
		s := r.Audit.Direct
		switch {
		case r.Strategy == "naive":
			if s.Oversold == 0 {
				t.Errorf("naive: oversold 0 with think_ms 10 and 24 buyers at once")
			}
		case s.Oversold != 0 || s.DuplicateUsers != 0 || !s.Consistent:
			t.Errorf("%s: direct audit %+v", r.Name, *s)
		}
		if r.Strategy == "redis" && (s.Gate == nil || !s.Gate.Agrees) {
			t.Errorf("redis: gate and PostgreSQL disagree: %+v", s.Gate)
		}
	}
	for _, want := range append(append([]string{}, loadgen.Strategies...), loadgen.SoldOutRowName, loadgen.GinBaselineName) {
		if !seen[want] {
			t.Errorf("no %q run in the report", want)
		}
	}
}

// compareOn runs a short `loadtest compare` (stock 20, think_ms 10, 24 users at once, about
// 4 s per strategy) against targets with the admin token, and returns its report.
func compareOn(t *testing.T, token string, targets []string, dsn string, extra ...string) loadgen.Report {
	t.Helper()
	jsonPath := filepath.Join(t.TempDir(), "compare.json")
	args := append([]string{"loadtest", "compare", "-targets", strings.Join(targets, ","),
		"-stock", "20", "-think-ms", "10", "-workers", "24", "-repeat-share", "0.1",
		"-duration", "4s", "-requests", "20000", "-after-soldout", "1s", "-timeout", "5s",
		"-progress", "0", "-wait", "30s", "-json", jsonPath, "-database-url", dsn,
	}, extra...)
	getenv := func(k string) string {
		if k == "ADMIN_TOKEN" {
			return token
		}
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, args, getenv, &stdout, &stderr)
	t.Logf("loadtest compare:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("compare: %v (exit %d)\nstderr:\n%s", err, exitCode(err), stderr.String())
	}
	rep := readReport(t, jsonPath)
	return rep
}

// TestLabShortMatrix runs `loadtest lab -short` on a fresh schema and key prefix: three real
// API processes, real kill -9 and SIGSTOP of the lock's holder and a real Sentinel failover
// under it, each lock's defining flaw (none and mutex oversell in a crowd, the unrenewed
// leases in long work, setnx and setnx-expire stall after a crash, the unfenced watchdog
// oversells after a pause, a lease oversells after a failover that lost it, the advisory lock
// survives a pause, ZooKeeper's lock oversells after a pause without its fence and not with it,
// nor when its ensemble's leader is killed) and dlock safe in every scenario. The command exits
// 0 only when every cell came out as expected.
func TestLabShortMatrix(t *testing.T) {
	// Not parallel: its three processes and their faults would slow the other tests of the
	// package past their bounds; alone, it takes 110-120 s under -race (two of its cells, the
	// failover ones, start a Sentinel stage and three processes of their own), and some 30 s
	// more for the ZooKeeper ensemble and its three cells.
	dsn, redisAddr, prefix := testenv.APIBackend(t) // the prefix's cleanup deletes stuck locks too
	servers.RedisBin(t)                             // the failover cells start redis-servers of their own
	servers.ZooKeeperJava(t)                        // the zookeeper cells start an ensemble of their own
	dir := t.TempDir()
	jsonPath, reportPath := filepath.Join(dir, "lab.json"), filepath.Join(dir, "lab.html")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"loadtest", "lab", "-short", "-quiet", "-json", jsonPath, "-report", reportPath,
		"-database-url", dsn, "-redis-addr", redisAddr, "-redis-prefix", prefix}, func(string) string { return "" }, &stdout, &stderr)
	t.Logf("loadtest lab -short:\n%s%s", stdout.String(), stderr.String())
	if err != nil {
		t.Fatalf("loadtest lab -short: %v", err)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var res labrun.Result
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != len(labrun.Short) {
		t.Fatalf("%d cells, want %d", len(res.Cells), len(labrun.Short))
	}
	for _, c := range res.Cells {
		if !c.OK() || len(c.Series) < 2 {
			t.Errorf("%s × %s: %s, expected %s, %d samples", c.Lock, c.Scenario, c, c.Expected, len(c.Series))
		}
		if c.Scenario == "crash" || c.Scenario == "pause" || c.Scenario == "failover" {
			if !strings.Contains(c.Fault, "SIG") {
				t.Errorf("%s × %s: no fault done: %s", c.Lock, c.Scenario, c.Fault)
			}
		}
		if c.Scenario == "failover" && !strings.HasPrefix(c.Lock, "zookeeper") && !strings.Contains(c.Fault, "which lacked the lock") {
			t.Errorf("%s × %s: no failover to a replica that lacked the lock: %s", c.Lock, c.Scenario, c.Fault)
		}
		if c.Scenario == "failover" && strings.HasPrefix(c.Lock, "zookeeper") && !strings.Contains(c.Fault, "led") {
			t.Errorf("%s × %s: no new ZooKeeper leader after its leader's kill: %s", c.Lock, c.Scenario, c.Fault)
		}
	}
	page, err := os.ReadFile(reportPath)
	if err != nil || !bytes.Contains(page, []byte(`id="matrix"`)) {
		t.Errorf("no report: %v", err)
	}
}
