package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/labrun"
	"github.com/seckill/seckill/internal/testenv"
)

// TestLabShortMatrix runs `loadtest lab -short` on a fresh schema and key prefix: three real
// API processes, real kill -9 and SIGSTOP of the lock's holder, each lock's defining flaw
// (none and mutex oversell in a crowd, the unrenewed leases in long work, setnx and
// setnx-expire stall after a crash, the unfenced watchdog oversells after a pause) and dlock
// safe in every scenario. The command exits 0 only when every cell came out as expected.
func TestLabShortMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three API processes for about two minutes; skipped with -short")
	}
	dsn := testenv.Schema(t)
	redisAddr := testenv.RedisAddr(t)
	_, prefix := testenv.Redis(t) // its cleanup deletes the lab's keys, stuck locks included
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
		if c.Scenario == "crash" || c.Scenario == "pause" {
			if !strings.Contains(c.Fault, "SIG") {
				t.Errorf("%s × %s: no fault done: %s", c.Lock, c.Scenario, c.Fault)
			}
		}
	}
	page, err := os.ReadFile(reportPath)
	if err != nil || !bytes.Contains(page, []byte(`id="matrix"`)) {
		t.Errorf("no report: %v", err)
	}
}
