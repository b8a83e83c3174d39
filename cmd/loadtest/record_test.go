package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/loadgen"
)

// recordFixture is a report as compare or baseline writes it, with round figures.
func recordFixture(cmd string, workers, rate int, batchMax string, rows ...loadgen.SummaryRow) loadgen.Report {
	return loadgen.Report{
		Command: cmd, Started: time.Date(2026, 11, 22, 23, 4, 14, 0, time.UTC),
		Flags: []string{"-runs=3", "-stock=50000000", "-targets=http://127.0.0.1:8081,http://127.0.0.1:8082,http://127.0.0.1:8083",
			"-meta-like=a b"},
		Build: loadgen.BuildReport{Version: "v1.2.0+dirty", Revision: "662b1cb0123456789abcdef0123456789abcdef0", Modified: true, Go: "go1.26.8"},
		Machine: loadgen.Machine{Host: "vm", CPUModel: "AMD EPYC", Cores: 2, MemoryBytes: 24 << 30, Kernel: "Linux 6.18.44",
			PostgreSQL: "15.14", Redis: "7.0.15"},
		CPU: &loadgen.CPUTime{Ticks: 1000, StealTicks: 10, StealPercent: 1},
		Scenario: loadgen.Scenario{Targets: []string{"a", "b", "c"}, Stock: 50_000_000, Workers: workers, Rate: rate,
			RepeatShare: 0.1, Duration: 8 * time.Second},
		Meta:    map[string]string{"batch_max": batchMax, "db_max_conns": "20"},
		Rounds:  [][]loadgen.RunReport{{}, {}, {}},
		Summary: rows,
		OK:      true,
	}
}

// writeReports writes reps as JSON files in a new directory and returns their paths.
func writeReports(t *testing.T, reps ...loadgen.Report) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for i, r := range reps {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, strings.Repeat("r", i+1)+".json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func record(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), append([]string{"loadtest", "record"}, args...), func(string) string { return "" }, &out, &errb); err != nil {
		t.Fatalf("record %v: %v\n%s", args, err, errb.String())
	}
	return out.String()
}

func TestRecordHot(t *testing.T) {
	t.Parallel()
	dlock := func(ordersPerSec, p99 float64) loadgen.SummaryRow {
		return loadgen.SummaryRow{Name: "dlock", Strategy: "dlock", OrdersPerSec: ordersPerSec, AnswersPerSec: ordersPerSec * 1.1, P99: p99, P99Bought: p99 - 1, OK: true}
	}
	backends := recordFixture("compare", 512, 0, "128",
		loadgen.SummaryRow{Name: "dlock (redis)", Strategy: "dlock", Backend: loadgen.BackendRedis, OrdersPerSec: 3000, P99: 60, P99Bought: 59, OK: true},
		loadgen.SummaryRow{Name: "dlock (etcd)", Strategy: "dlock", Backend: loadgen.BackendEtcd, OrdersPerSec: 600, P99: 240, P99Bought: 230, OK: true,
			VsRedis: &loadgen.BackendRatio{OrdersPerSec: 0.21, P99: 3.9, P99Bought: 3.8}})
	backends.Meta["etcd_members"] = "3"
	backends.Scenario.EtcdTargets = []string{"d", "e", "f"}
	hot := dlock(3259.4, 50.24)
	hot.CPUPerAnswer = map[string]float64{"api": 130.4, "postgres": 31, "loadtest": 75, loadgen.OtherCommands: 20}
	paths := writeReports(t,
		recordFixture("compare", 64, 0, "128", hot),
		backends,
		recordFixture("compare", 64, 1000, "128", dlock(899, 28.5)),
		recordFixture("baseline", 64, 0, "", loadgen.SummaryRow{Name: loadgen.SoldOutRowName, Strategy: "dlock", RejectionsPerSec: 9000, P99: 20,
			CPUPerAnswer: map[string]float64{"api": 67, "loadtest": 59, loadgen.OtherCommands: 5}},
			loadgen.SummaryRow{Name: loadgen.GinBaselineName, RejectionsPerSec: 18194.2, P99: 10, Errors: 1}),
	)
	got := record(t, append([]string{"-format", "hot", "-stamp", "2026-11-22T230414Z"}, paths...)...)
	want := `# Hot product, dlock strategy, group commit on and off, locks in Redis and in etcd (2026-11-22T230414Z)

- machine: AMD EPYC, 2 cores; go1.26.8
- three API processes, one product (stock 50,000,000: never sells out), think_ms 0,
  10 % repeat buyers, each attack 8s, medians of 3 runs; commit 662b1cb (uncommitted changes)

| BATCH_MAX | buyers at once | orders/s | p99 (ms) | p99 of purchases (ms) | oversold | dupes | errors |
|---|---|---|---|---|---|---|---|
| 128 | 64 | 3259 | 50.2 | 49.2 | 0 | 0 | 0 |
| 128 | open loop, 1000 requests/s | 899 | 28.5 | 27.5 | 0 | 0 | 0 |
| sold out on the API (stock 0) | 64 | 9000 answers/s | 20.0 | - | - | - | 0 |
| bare gin 409 (ceiling) | 64 | 18194 answers/s | 10.0 | - | - | - | 1 |

Hot product against the sold-out product on the same processes: 64 buyers: orders/s 0.36x the sold-out answers/s (answers/s 0.40x), p99 2.51x.

CPU by command, 64 buyers (whole machine, load generator included): hot product api 130, loadtest 75, postgres 31, other 20 (total 256) us an answer; sold out api 67, loadtest 59, other 5 (total 131) us an answer.

Lock backends: dlock with its product locks in Redis, then in etcd (API processes with
LOCK_BACKEND=etcd), the same buyers back to back in each round; "vs Redis" is the median over
the rounds of etcd's figure over Redis's in the same round. Each API process had DB_MAX_CONNS 20.

| lock store | BATCH_MAX | buyers at once | orders/s | vs Redis | p99 (ms) | vs Redis | p99 of purchases (ms) | oversold | dupes | errors |
|---|---|---|---|---|---|---|---|---|---|---|
| Redis | 128 | 512 | 3000 | - | 60.0 | - | 59.0 | 0 | 0 | 0 |
| etcd, 3 members | 128 | 512 | 600 | 0.21x | 240.0 | 3.90x | 230.0 | 0 | 0 | 0 |

CPU steal (time the hypervisor gave to other guests) during the measurements: 1.0 %
`
	if got != want {
		t.Fatalf("record\n%s\nwant\n%s", got, want)
	}
}

func TestRecordBench(t *testing.T) {
	t.Parallel()
	rep := recordFixture("compare", 64, 0, "", loadgen.SummaryRow{Name: "dlock", Strategy: "dlock", OrdersPerSec: 769, Bought: 100, OK: true, Verdict: "PASS"})
	paths := writeReports(t, rep)
	out := filepath.Join(filepath.Dir(paths[0]), "rec.md")
	if got := record(t, "-o", out, paths[0]); got != "" {
		t.Errorf("record -o wrote %q to stdout", got)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	loadgen.PrintTable(&table, rep)
	for _, want := range []string{
		"# Benchmark 2026-11-22T230414Z on vm\n\n| | |\n|---|---|\n",
		"| CPU | AMD EPYC, 2 cores (shared with PostgreSQL, Redis, the APIs and the load generator) |\n",
		"| Memory | 24.0 GiB |\n| Kernel | Linux 6.18.44 |\n| Go | go1.26.8 |\n| PostgreSQL | 15.14 |\n| Redis | 7.0.15 |\n",
		"| Commit | 662b1cb (uncommitted changes) |\n| API processes | 3 (DB_MAX_CONNS 20 each) |\n| CPU steal | 1.0 % during the attacks |\n",
		"Command: `bin/loadtest compare -runs=3 -stock=50000000 -targets=http://127.0.0.1:8081,http://127.0.0.1:8082,http://127.0.0.1:8083 '-meta-like=a b'`\n",
		"```text\n" + table.String() + "```\n",
		"[r.json](r.json).\n",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("record lacks %q:\n%s", want, b)
		}
	}
}

func TestRecordUsage(t *testing.T) {
	t.Parallel()
	paths := writeReports(t, loadgen.Report{}, loadgen.Report{})
	for _, args := range [][]string{{}, {"-format", "csv", paths[0]}, {"-format", "bench", paths[0], paths[1]}} {
		err := run(context.Background(), append([]string{"loadtest", "record"}, args...), func(string) string { return "" }, io.Discard, io.Discard)
		if got := exitCode(err); got != exitUsage {
			t.Errorf("record %v: exit %d (%v), want %d", args, got, err, exitUsage)
		}
	}
	err := run(context.Background(), []string{"loadtest", "record", filepath.Join(t.TempDir(), "none.json")}, func(string) string { return "" }, io.Discard, io.Discard)
	if got := exitCode(err); got != exitHarness {
		t.Errorf("record of a missing file: exit %d (%v), want %d", got, err, exitHarness)
	}
}

// TestRecordHotInRounds: a hot row whose rounds ran the sold-out product too (compare with
// -baseline) is set against it round by round: each ratio is the median of the rounds'
// ratios (0.60x, 0.66x, 2.00x here), not the ratio of the medians (0.50x, 0.55x, 2.00x).
func TestRecordHotInRounds(t *testing.T) {
	t.Parallel()
	run := func(name string, orders, answers, rejections, p99 float64) loadgen.RunReport {
		return loadgen.RunReport{Name: name, Strategy: "dlock", Stats: loadgen.RunStats{OrdersPerSec: orders, Throughput: answers,
			RejectionsPerSec: rejections, Latency: loadgen.Latencies{P99: p99}}}
	}
	rep := recordFixture("compare", 512, 0, "128",
		loadgen.SummaryRow{Name: "dlock", Strategy: "dlock", OrdersPerSec: 5000, AnswersPerSec: 5500, P99: 200, P99Bought: 199, OK: true},
		loadgen.SummaryRow{Name: loadgen.SoldOutRowName, Strategy: "dlock", RejectionsPerSec: 10000, AnswersPerSec: 10000, P99: 100, OK: true},
		loadgen.SummaryRow{Name: loadgen.GinBaselineName, RejectionsPerSec: 12000, P99: 90})
	rep.Rounds = [][]loadgen.RunReport{
		{run("dlock", 5000, 5500, 0, 200), run(loadgen.SoldOutRowName, 0, 10000, 10000, 100), run(loadgen.GinBaselineName, 0, 12000, 12000, 90)},
		{run("dlock", 6000, 6600, 0, 300), run(loadgen.SoldOutRowName, 0, 10000, 10000, 100), run(loadgen.GinBaselineName, 0, 12000, 12000, 90)},
		{run("dlock", 4000, 4400, 0, 150), run(loadgen.SoldOutRowName, 0, 5000, 5000, 75), run(loadgen.GinBaselineName, 0, 6000, 6000, 70)},
	}
	got := record(t, append([]string{"-format", "hot", "-stamp", "2026-11-24T030000Z"}, writeReports(t, rep)...)...)
	for _, want := range []string{
		"| 128 | 512 | 5000 | 200.0 | 199.0 | 0 | 0 | 0 |\n| sold out on the API (stock 0) | 512 | 10000 answers/s | 100.0 | - | - | - | 0 |\n",
		"Hot product against the sold-out product on the same processes (the two back to back in each round; " +
			"each ratio the median of the 3 rounds' ratios): 512 buyers: orders/s 0.60x the sold-out answers/s (answers/s 0.66x), p99 2.00x.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("record lacks %q:\n%s", want, got)
		}
	}
}
