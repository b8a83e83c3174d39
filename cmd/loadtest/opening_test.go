package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/testenv"
)

// runOpening runs loadtest run with args against three API processes on the test's own
// backend, which it reads and audits directly, and returns the report, its one run and
// loadtest's output.
func runOpening(t *testing.T, title string, args ...string) (loadgen.Report, loadgen.RunReport, string) {
	t.Helper()
	dsn, redisAddr, prefix := testenv.APIBackend(t)
	t.Parallel()
	targets, _ := threeAPIs(t, dsn, redisAddr, prefix)
	jsonPath := filepath.Join(t.TempDir(), "opening.json")
	args = append([]string{"loadtest", "run", "-targets", strings.Join(targets, ",")}, args...)
	out := runReported(t, title, 2*time.Minute, append(args, "-progress", "0", "-json", jsonPath,
		"-database-url", dsn, "-redis-addr", redisAddr, "-redis-prefix", prefix)...)
	rep := readReport(t, jsonPath)
	if len(rep.Rounds) != 1 || len(rep.Rounds[0]) != 1 {
		t.Fatalf("%d rounds, want one run:\n%s", len(rep.Rounds), out)
	}
	return rep, rep.Rounds[0][0], out
}

// TestOpeningBurstAudited runs a real opening against three real API processes: a redis
// product of 100 units whose sale starts 3 s after its creation, 400 of its 2,000 buyers
// sending 2 requests each before T0, then all 2,000 due within 100 ms from T0. Every early
// request is answered sale_not_started; no unit is admitted, and no order created (PostgreSQL's
// created_at), before T0; exactly the stock is sold; the report says what was sent when, the
// first second's answers and both groups' chances.
func TestOpeningBurstAudited(t *testing.T) {
	rep, r, out := runOpening(t, "loadtest run -model opening", "-strategy", "redis", "-stock", "100", "-model", "opening",
		"-opening-in", "3s", "-burst", "2000", "-burst-window", "100ms", "-early-share", "0.2", "-early-hits", "2",
		"-max-workers", "512", "-duration", "20s", "-timeout", "10s", "-seed", "5")
	if rep.Scenario.Model != loadgen.ModelOpening || rep.Scenario.Opening == nil {
		t.Errorf("scenario %+v, want an opening", rep.Scenario)
	}
	o := r.Opening
	if o == nil {
		t.Fatalf("no opening in the report:\n%s", out)
	}
	b, _ := json.Marshal(o)
	t.Logf("opening: %s", b)
	if !r.Verdict.OK {
		t.Errorf("verdict %+v", r.Verdict)
	}
	if got, want := o.Early[loadgen.SaleNotStarted], int64(800); got != want || o.Early.Total() != want {
		t.Errorf("before T0: %d sale_not_started of %d answers, want %d of %d", got, o.Early.Total(), want, want)
	}
	if got := r.Stats.Outcomes[loadgen.SaleNotStarted]; got != 800 || r.Stats.Outcomes[loadgen.Other4xx] != 0 {
		t.Errorf("outcomes %v: want 800 sale_not_started, no other_4xx", r.Stats.Outcomes)
	}
	if o.AdmittedBeforeT0 != 0 || o.Orders == nil || o.Orders.BeforeStart != 0 || o.Orders.FirstMS < 0 {
		t.Errorf("admitted before T0 %d, orders %+v: want nothing before T0", o.AdmittedBeforeT0, o.Orders)
	}
	if o.Admitted != 100 || o.Orders.Count != 100 || o.SellOutMS == nil {
		t.Errorf("admitted %d, orders %d, sell-out %v: want the 100 units sold out", o.Admitted, o.Orders.Count, o.SellOutMS)
	}
	if o.SellOutMS != nil && math.Abs(r.Stats.SellSeconds*1000-*o.SellOutMS) > 1 {
		t.Errorf("selling window %.3f s, want the sell-out's %.1f ms: an opening's orders/s runs from T0", r.Stats.SellSeconds, *o.SellOutMS)
	}
	if o.Burst.Sent != 2000 || o.Burst.FirstMS < 0 || o.Burst.SpreadMS <= 0 || o.Burst.Unsent != 0 {
		t.Errorf("burst %+v: want 2,000 sent from T0 on", o.Burst)
	}
	if o.FirstSecond.Outcomes.Total() == 0 || o.FirstSecond.Latency.P99 <= 0 {
		t.Errorf("first second %+v: want answers", o.FirstSecond)
	}
	e, at := o.Fairness.Early, o.Fairness.OnTime
	if e.Buyers != 400 || at.Buyers != 1600 || e.Won+at.Won != 100 {
		t.Errorf("fairness %+v: want 400 early and 1,600 on-time buyers sharing the 100 units", o.Fairness)
	}
	if a := r.Audit; a == nil || a.Direct == nil || a.Direct.Oversold != 0 || a.Direct.Orders != 100 || !a.Direct.Consistent {
		t.Errorf("direct audit %+v", a)
	}
	for _, want := range []string{"opening ", "before T0 ", "sell-out ", "first second ", "early vs T0 "} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
