package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestAbandonmentSale is an abandonment sale over three real API processes: each product
// (pessimistic, redis, queue) has a window of 1 s; 60% of the winners pay, 20% cancel, within
// 0..500 ms, and the rest walk away, their units coming back when the sweepers expire them and
// selling again to the buyers who keep arriving. The sale must stop paid out: every unit
// paid exactly once (PostgreSQL read directly: stock + pending + paid == initial stock, paid
// == stock, no user paid twice), units resold, expired and cancelled reservations seen, and
// every payment answered; then the same of dlock with the API's audit alone, some of its
// payments late (409 order_expired, their units sold again).
func TestAbandonmentSale(t *testing.T) {
	dsn, redisAddr, prefix := testenv.APIBackend(t)
	t.Parallel()
	targets, _ := threeAPIs(t, dsn, redisAddr, prefix)
	// PostgreSQL read directly, then the API's audit alone (-audit api) for dlock.
	checkAbandonment(t, targets, "database", "-strategies", "pessimistic,redis,queue",
		"-database-url", dsn, "-redis-addr", redisAddr, "-redis-prefix", prefix)
	// A sixth of its payments come after the window (uniform in 0..1.2 s): 409 order_expired.
	checkAbandonment(t, targets, "api", "-strategies", "dlock", "-audit", "api", "-pay-delay", "1200ms")
}

// threeAPIs starts three API processes on the test's backend, each with a pool of 10 and
// the admin token apisToken, and returns their base URLs and the processes.
func threeAPIs(t *testing.T, dsn, redisAddr, prefix string) ([]string, []*servers.API) {
	t.Helper()
	apis := servers.StartAPIs(t, 3, map[string]string{
		"DATABASE_URL": dsn, "REDIS_ADDR": redisAddr, "REDIS_KEY_PREFIX": prefix,
		"ADMIN_TOKEN": apisToken, "LOG_LEVEL": "warn", "DB_MAX_CONNS": "10",
	})
	var targets []string
	for _, api := range apis {
		targets = append(targets, api.Base)
	}
	return targets, apis
}

// apisToken is the admin token of threeAPIs' processes.
const apisToken = "ci-loadtest-admin-token"

// runReported runs loadtest with args (ADMIN_TOKEN apisToken) for at most timeout, and fails
// the test if it fails. Its report is logged when the test ends, after what failed (the
// report is long), and its stderr too if the test failed.
func runReported(t *testing.T, title string, timeout time.Duration, args ...string) string {
	t.Helper()
	getenv := func(k string) string {
		if k == "ADMIN_TOKEN" {
			return apisToken
		}
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, args, getenv, &stdout, &stderr)
	t.Cleanup(func() {
		t.Logf("%s:\n%s", title, stdout.String())
		if t.Failed() {
			t.Logf("its stderr:\n%s", stderr.String())
		}
	})
	if err != nil {
		t.Fatalf("%s: %v", title, err)
	}
	return stdout.String()
}

// checkAbandonment runs an abandonment sale of stock 30 on targets with extra flags and
// checks that each product was paid out, its audit from source.
func checkAbandonment(t *testing.T, targets []string, source string, extra ...string) {
	t.Helper()
	const stock = 30
	jsonPath := filepath.Join(t.TempDir(), "abandon.json")
	args := append([]string{"loadtest", "compare", "-targets", strings.Join(targets, ","),
		"-stock", "30", "-rate", "60", "-duration", "90s", "-requests", "5400", "-timeout", "5s", "-seed", "7", // bounds: it pays out in 5-10 s
		"-pay-within", "1s", "-pay-ratio", "0.6", "-cancel-ratio", "0.2", "-pay-delay", "500ms",
		"-progress", "0", "-json", jsonPath}, extra...)
	stdout := runReported(t, "loadtest compare -pay-within ("+source+" audit)", 5*time.Minute, args...)
	if !strings.Contains(stdout, "abandonment sale [") || !strings.Contains(stdout, "initial stock 30: holds") {
		t.Errorf("the text report lacks the abandonment sale's section")
	}
	rep := readReport(t, jsonPath)
	if len(rep.Rounds) != 1 || len(rep.Rounds[0]) != len(strings.Split(extra[1], ",")) {
		t.Fatalf("rounds %+v, want one run per strategy of %s (no baseline)", rep.Rounds, extra[1])
	}
	for _, r := range rep.Rounds[0] {
		l := r.Lifecycle
		if l == nil {
			t.Fatalf("%s: no lifecycle in the report", r.Name)
		}
		a := l.Audit
		split := source == "api" || (a.Expired != nil && *a.Expired > 0 && a.Cancelled != nil && *a.Cancelled > 0)
		answers, _ := json.Marshal(r.Stats.Outcomes)
		t.Logf("%s: answers %s, errors such as %q", r.Name, answers, r.Stats.TransportErrors)
		switch {
		case !r.Verdict.OK:
			t.Errorf("%s: verdict %+v", r.Name, r.Verdict)
		case l.StopReason != loadgen.StopPaidOut:
			t.Errorf("%s: stopped %s, want %s with buyers to spare", r.Name, l.StopReason, loadgen.StopPaidOut)
		case a.Source != source || a.Paid != stock || a.Stock != 0 || a.Pending != 0 || a.UsersPaidTwice != 0:
			t.Errorf("%s: settled audit %+v, want every unit paid once, from %s", r.Name, a, source)
		case a.Resold == 0 || a.Ended == 0 || !split:
			t.Errorf("%s: audit %+v: want units resold after reservations expired and were cancelled", r.Name, a)
		case l.Payers.PaidUsers != stock || l.Payers.Unclear != 0:
			t.Errorf("%s: payers %+v, want %d users answered paid and nothing unclear", r.Name, l.Payers, stock)
		case source == "api" && l.Payers.Answers["pay order_expired"] == 0:
			t.Errorf("%s: answers %v, want payments after the window answered 409 order_expired", r.Name, l.Payers.Answers)
		case len(l.Timeline) < 2:
			t.Errorf("%s: timeline %+v, want a row per second", r.Name, l.Timeline)
		default:
			t.Logf("%s: %+v; payers %+v", r.Name, a, l.Payers)
		}
	}
}

// TestAbandonFlags: the abandonment sale's flags are refused without -pay-within, and ratios
// that do not add up are refused, both as usage errors (exit 2), before any request.
func TestAbandonFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-pay-ratio", "0.5"},
		{"-cancel-ratio", "0.1"},
		{"-pay-within", "2s", "-pay-ratio", "0.8", "-cancel-ratio", "0.3"},
		{"-pay-within", "2s", "-pay-ratio", "1.2"},
		{"-pay-within", "2s", "-strategy", "naive"},
	} {
		var stdout, stderr bytes.Buffer
		argv := append([]string{"loadtest", "run", "-targets", "http://127.0.0.1:1", "-admin-token", "t"}, args...)
		err := run(context.Background(), argv, func(string) string { return "" }, &stdout, &stderr)
		if exitCode(err) != exitUsage {
			t.Errorf("%v: %v (exit %d), want a usage error", args, err, exitCode(err))
		}
	}
}
