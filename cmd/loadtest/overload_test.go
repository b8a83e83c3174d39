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
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestPessimisticOverloadKeepsSelling: a pessimistic product whose buyers think 100 ms under
// the row lock sells about 10 units a second; an open load of 50 buyers a second, each
// giving up after 2 s, is five times that, for 16 s, over three real API processes. The
// product must keep selling: at least 3 orders a second (it made 9), the excess answered 503
// busy at once (the controlled delay of the wait for a connection, order.slots), and the
// audit holds. Before that wait shed load, the line grew until nearly every buyer served had
// waited as long as its client would: the product sold 26 units in 18 s, in bursts between
// stalls, and 771 of 800 answers were client timeouts (this scenario, with the shedding
// turned off); a CI run of TestAbandonmentSale, its CPU starved by the other tests, sold
// nothing for 80 s so, with units left.
func TestPessimisticOverloadKeepsSelling(t *testing.T) {
	dsn, redisAddr, prefix := ownBackend(t)
	t.Parallel()
	var targets []string
	for _, api := range servers.StartAPIs(t, 3, map[string]string{
		"DATABASE_URL": dsn, "REDIS_ADDR": redisAddr, "REDIS_KEY_PREFIX": prefix,
		"ADMIN_TOKEN": "ci-loadtest-admin-token", "LOG_LEVEL": "warn", "DB_MAX_CONNS": "10",
	}) {
		targets = append(targets, api.Base)
	}
	jsonPath := filepath.Join(t.TempDir(), "overload.json")
	args := []string{"loadtest", "compare", "-baseline=false", "-targets", strings.Join(targets, ","), "-strategies", "pessimistic",
		"-stock", "100000", "-think-ms", "100", "-rate", "50", "-duration", "16s", "-requests", "800", "-timeout", "2s",
		"-seed", "7", "-progress", "0", "-json", jsonPath, "-database-url", dsn, "-redis-addr", redisAddr, "-redis-prefix", prefix}
	getenv := func(k string) string {
		if k == "ADMIN_TOKEN" {
			return "ci-loadtest-admin-token"
		}
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, args, getenv, &stdout, &stderr)
	defer func() {
		t.Logf("loadtest compare:\n%s", stdout.String())
		if t.Failed() {
			t.Logf("its stderr:\n%s", stderr.String())
		}
	}()
	if err != nil {
		t.Fatalf("compare: %v", err)
	}
	rep := readReport(t, jsonPath)
	if len(rep.Rounds) != 1 || len(rep.Rounds[0]) != 1 {
		t.Fatalf("%d rounds, want one run of one strategy", len(rep.Rounds))
	}
	r := rep.Rounds[0][0]
	st := r.Stats
	answers, _ := json.Marshal(st.Outcomes)
	t.Logf("answers %s; sold for %.1f s of %.1f s", answers, st.SellSeconds, st.Seconds)
	switch {
	case !r.Verdict.OK:
		t.Errorf("verdict %+v", r.Verdict)
	case float64(st.Outcomes[loadgen.Bought]) < 3*st.Seconds:
		t.Errorf("%d orders in %.1f s: under overload the product sold less than a third of the 10 a second it can",
			st.Outcomes[loadgen.Bought], st.Seconds)
	case st.Outcomes[loadgen.Busy] == 0:
		t.Errorf("answers %s: want the excess answered busy", answers)
	}
}
