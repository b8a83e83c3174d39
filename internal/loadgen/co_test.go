package loadgen

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"
)

// saturable returns the purchase URL of a server that serves slots requests at once, each
// for hold, and answers sold_out: it serves at most slots/hold requests a second, and a load
// above that saturates it by design, on any machine.
func saturable(t *testing.T, slots int, hold time.Duration) []string {
	t.Helper()
	sem := make(chan struct{}, slots)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sem <- struct{}{}
		time.Sleep(hold)
		<-sem
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusConflict)
		w.Write([]byte(`{"title":"sold out","status":409,"code":"sold_out"}`))
	}))
	t.Cleanup(srv.Close)
	return purchaseURLs([]string{srv.URL}, 1)
}

// saturatingSpec is an attack at 5 times what saturable(2, 5ms) serves (400/s).
func saturatingSpec(urls []string, model string) attackSpec {
	return attackSpec{name: "sat", targeter: newTargeter(urls, newBuyers(1, 0, 1), nil), model: model, rate: 2000, workers: 4,
		maxWorkers: 4, duration: time.Minute, requests: 400, timeout: 30 * time.Second}
}

// TestCorrectedAboveRawUnderSaturation: a closed pool paced at 2000 requests/s (wrk2) on a
// server that serves 400/s. Each request waits for a worker: raw latency, from the send, is
// about the pool over the server (4 workers on 2 slots of 5 ms: ~10 ms) and hides the wait;
// corrected latency, from each request's place in the schedule, counts it. The 400 requests
// were due within 0.2 s and are served over at least 1 s, so the corrected p99 is far above
// the raw one, however fast or slow this machine is.
func TestCorrectedAboveRawUnderSaturation(t *testing.T) {
	t.Parallel()
	res, err := attack(context.Background(), saturatingSpec(saturable(t, 2, 5*time.Millisecond), ModelClosed), &liveCounts{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := summarize(res)
	raw, cor := st.Latency, st.LatencyCorrected
	t.Logf("raw p99 %.1f ms, corrected p99 %.1f ms (%s)", raw.P99, cor.P99, st.Correction)
	if st.Requests != 400 || st.Outcomes[SoldOut] != 400 {
		t.Fatalf("%d requests, outcomes %v; want 400 sold_out", st.Requests, st.Outcomes)
	}
	if cor.P50 < raw.P50 || cor.P99 < raw.P99 || cor.Max < raw.Max {
		t.Errorf("corrected %+v below raw %+v", cor, raw)
	}
	if cor.P99 < 5*raw.P99 {
		t.Errorf("corrected p99 %.1f ms, want more than 5× the raw %.1f ms on a saturated server", cor.P99, raw.P99)
	}
	if st.P99Corrected() <= st.P99() || st.Model != ModelClosed || st.Arrivals.Delayed == 0 {
		t.Errorf("P99Corrected %s, P99 %s, model %s, delayed %d", st.P99Corrected(), st.P99(), st.Model, st.Arrivals.Delayed)
	}
}

// TestOpenModelReportsHeldBackArrivals: an open run capped at 4 in flight on the same server
// does not silently turn closed: its arrivals wait for a free worker and are counted as
// delayed, and their latency runs from when they were due; a run that ends first counts the
// arrivals it never sent as dropped.
func TestOpenModelReportsHeldBackArrivals(t *testing.T) {
	t.Parallel()
	urls := saturable(t, 2, 5*time.Millisecond)
	res, err := attack(context.Background(), saturatingSpec(urls, ModelOpen), &liveCounts{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := summarize(res)
	a := st.Arrivals
	if a.Scheduled != 400 || a.Sent != 400 || a.Dropped != 0 || a.Delayed == 0 || a.MaxInFlight > 4 {
		t.Errorf("arrivals %+v; want 400 scheduled and sent, some delayed, none dropped, at most 4 in flight", a)
	}
	if st.LatencyCorrected.P99 < 5*st.Latency.P99 {
		t.Errorf("corrected p99 %.1f ms, want more than 5× the raw %.1f ms", st.LatencyCorrected.P99, st.Latency.P99)
	}

	spec := saturatingSpec(urls, ModelOpen)
	spec.duration, spec.requests = 500*time.Millisecond, 1_000_000 // 1000 due, at most ~200 served
	res, err = attack(context.Background(), spec, &liveCounts{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a = summarize(res).Arrivals
	if a.Scheduled < 990 || a.Dropped == 0 || a.Sent+a.Dropped != a.Scheduled {
		t.Errorf("arrivals %+v; want about 1000 scheduled, the unsent ones dropped", a)
	}
}

// TestClosedUnpacedCorrection: a closed pool without a schedule gets HdrHistogram's estimate,
// never below the raw figures; and -csv's rows of the run parse back and add up.
func TestClosedUnpacedCorrection(t *testing.T) {
	t.Parallel()
	spec := saturatingSpec(saturable(t, 2, 5*time.Millisecond), ModelClosed)
	spec.rate, spec.requests = 0, 600
	res, err := attack(context.Background(), spec, &liveCounts{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	st := summarize(res)
	if st.LatencyCorrected.P99 < st.Latency.P99 || st.LatencyCorrected.Max < st.Latency.Max || res.correctedAfter <= 0 {
		t.Errorf("corrected %+v, raw %+v, interval %s", st.LatencyCorrected, st.Latency, res.correctedAfter)
	}

	var b bytes.Buffer
	w, err := newCSV(&b)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeCSV(w, "sat", res.seconds); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recs[0], csvHeader) || len(recs) < 2 {
		t.Fatalf("csv header %v, %d lines", recs[0], len(recs))
	}
	col := func(name string) int { return slices.Index(csvHeader, name) }
	var sent, answered int64
	for _, r := range recs[1:] {
		n := func(name string) int64 { v, _ := strconv.ParseInt(r[col(name)], 10, 64); return v }
		sent += n("sent")
		answered += n("admitted") + n("sold_out") + n("refused") + n("errors")
		if r[col("due")] != "" || r[col("p99_corrected_ms")] != "" {
			t.Errorf("row %v: an unpaced run has no schedule", r)
		}
	}
	last := recs[len(recs)-1]
	if sent != 600 || answered != 600 || last[col("in_flight")] != "0" {
		t.Errorf("csv: %d sent, %d answered, %s in flight at the end; want 600, 600, 0", sent, answered, last[col("in_flight")])
	}
}
