package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/testenv"
)

// TestPessimisticOverloadKeepsSelling: a pessimistic product whose buyers think 100 ms under
// the row lock sells about 10 units a second; an open load of 50 buyers a second, each
// giving up after 4 s, is five times that, for 16 s, over three real API processes. The
// product must keep selling: at least 3 orders a second (it made 9 to 10), the excess
// answered 503 busy at once (the controlled delay of the wait for a connection,
// order.slots), and the audit holds. Before that wait shed load, the line grew until every
// buyer served had waited about as long as its client would: with the shedding turned off,
// this scenario sold 46 units in its first 6.4 s and none in the 14 s after, and 751 of 800
// answers were client timeouts; a CI run of TestAbandonmentSale, its CPU starved by the
// other tests, sold nothing for 80 s so, with units left.
func TestPessimisticOverloadKeepsSelling(t *testing.T) {
	dsn, redisAddr, prefix := testenv.APIBackend(t)
	t.Parallel()
	targets, apis := threeAPIs(t, dsn, redisAddr, prefix)
	jsonPath := filepath.Join(t.TempDir(), "overload.json")
	runReported(t, "loadtest compare", 2*time.Minute, "loadtest", "compare", "-baseline=false", "-targets", strings.Join(targets, ","),
		"-strategies", "pessimistic", "-stock", "100000", "-think-ms", "100", "-rate", "50", "-duration", "16s", "-requests", "800",
		"-timeout", "4s", "-seed", "7", "-progress", "0", "-json", jsonPath,
		"-database-url", dsn, "-redis-addr", redisAddr, "-redis-prefix", prefix)
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
	var shed float64
	for _, a := range apis {
		shed += a.Metric("seckill_purchases_shed_total", `strategy="pessimistic"`)
	}
	t.Logf("seckill_purchases_shed_total: %.0f", shed)
	if busy := float64(st.Outcomes[loadgen.Busy]); shed == 0 || shed > busy {
		t.Errorf("seckill_purchases_shed_total %.0f over the processes, want some, and at most the %.0f busy answers", shed, busy)
	}
}
