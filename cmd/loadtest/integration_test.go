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

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestCompareAgainstThreeAPIs is the CI run of the harness: three real API processes on one
// fresh PostgreSQL schema and Redis prefix, every strategy for a second or two each. It
// fails on any oversell, duplicate or inconsistency of a safe strategy, and when naive does
// not oversell (think_ms 10 with 24 buyers at once makes it oversell every time).
func TestCompareAgainstThreeAPIs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three API processes; skipped with -short")
	}
	t.Parallel()
	dsn := testenv.Schema(t)
	redisAddr := testenv.RedisAddr(t)
	_, prefix := testenv.Redis(t) // its cleanup deletes the API's keys under prefix
	const token = "ci-loadtest-admin-token"
	var targets []string
	for _, api := range servers.StartAPIs(t, 3, map[string]string{
		"DATABASE_URL": dsn, "REDIS_ADDR": redisAddr, "REDIS_KEY_PREFIX": prefix,
		"ADMIN_TOKEN": token, "LOG_LEVEL": "warn", "DB_MAX_CONNS": "10", "SHUTDOWN_TIMEOUT": "15s",
	}) {
		targets = append(targets, api.Base)
	}
	rep := compareOn(t, token, targets, dsn, "-redis-addr", redisAddr, "-redis-prefix", prefix)
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
	for _, want := range append(append([]string{}, strategies...), soldOutRowName, ginBaselineName) {
		if !seen[want] {
			t.Errorf("no %q run in the report", want)
		}
	}
}

// compareOn runs a short `loadtest compare` (stock 20, think_ms 10, 24 users at once, about
// 4 s per strategy) against targets with the admin token, and returns its report.
func compareOn(t *testing.T, token string, targets []string, dsn string, extra ...string) report {
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
	var rep report
	b, err := os.ReadFile(jsonPath)
	if err == nil {
		err = json.Unmarshal(b, &rep)
	}
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
