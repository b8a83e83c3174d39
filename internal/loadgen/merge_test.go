package loadgen

import (
	"math"
	"testing"
	"time"
)

// twoMachines records the same latencies once in one tally and split across two, as one
// machine and two machines would, and returns the reports of the two halves and the whole.
func twoMachines(t *testing.T, offset time.Duration) (a, b, whole Report) {
	t.Helper()
	t0 := time.Date(2026, 11, 26, 20, 0, 0, 0, time.UTC)
	one, halves := newTally(), [2]*tally{newTally(), newTally()}
	x := uint64(7)
	for i := range 100_000 {
		x = x*6364136223846793005 + 1442695040888963407
		lat := time.Duration(x>>44) * time.Microsecond // up to ~1 s
		o := SoldOut
		if i%2001 == 0 { // 50 buyers, 25 on each machine
			o = Bought
		}
		at := time.Duration(i) * 10 * time.Microsecond // 1 s of requests
		one.add(at, lat, 2*lat, o)
		halves[i%2].add(at, lat, 2*lat, o)
	}
	report := func(ta *tally, started time.Time) Report {
		var c Counts
		c[Bought] = int64(len(ta.admittedAt))
		c[SoldOut] = ta.n - c[Bought]
		st := RunStats{Model: ModelOpen, Requests: ta.n, Outcomes: c, Started: started, Seconds: 1, SellSeconds: 1,
			Histograms: ta.histograms(), Arrivals: ArrivalStats{Sent: ta.n}}
		return Report{Command: "run", Started: started, Rounds: [][]RunReport{{{Name: "dlock", Stats: st, Verdict: verdict{OK: true, Label: "PASS"}}}}}
	}
	return report(halves[0], t0), report(halves[1], t0.Add(offset)), report(one, t0)
}

// TestMergeEqualsOneRun: merging the reports of two machines that split the requests gives
// the histograms, latencies and counts of one machine that made them all; orders/s are the
// sum of theirs when their windows coincide, and over the joined window when they do not.
func TestMergeEqualsOneRun(t *testing.T) {
	t.Parallel()
	a, b, whole := twoMachines(t, 0)
	m, err := Merge([]Report{a, b}, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	got, want := m.Rounds[0][0].Stats, whole.Rounds[0][0].Stats
	for _, pair := range [][2]string{{got.Histograms.Raw, want.Histograms.Raw}, {got.Histograms.Corrected, want.Histograms.Corrected},
		{got.Histograms.ByOutcome["sold_out"], want.Histograms.ByOutcome["sold_out"]}} {
		g, err1 := decodeHist(pair[0])
		w, err2 := decodeHist(pair[1])
		if err1 != nil || err2 != nil || !g.Equals(w) {
			t.Fatalf("merged histogram differs from one run's (%v, %v)", err1, err2)
		}
	}
	if got.Latency != latenciesOf(mustDecode(t, want.Histograms.Raw)) || got.LatencyCorrected.P99 <= got.Latency.P99 {
		t.Errorf("merged latencies %+v, corrected %+v", got.Latency, got.LatencyCorrected)
	}
	if got.Requests != 100_000 || got.Outcomes != want.Outcomes || got.Arrivals.Sent != 100_000 {
		t.Errorf("merged %d requests, outcomes %v; want 100000, %v", got.Requests, got.Outcomes, want.Outcomes)
	}
	if math.Abs(got.OrdersPerSec-50) > 1e-9 || got.Buyers() != 50 || !m.OK {
		t.Errorf("orders/s %v of %d buyers, want 25 + 25 over the same second; ok %v", got.OrdersPerSec, got.Buyers(), m.OK)
	}

	a, b, _ = twoMachines(t, time.Second) // one after the other: 50 buyers over 2 s
	m, err = Merge([]Report{a, b}, []string{"a.json", "b.json"})
	if err != nil {
		t.Fatal(err)
	}
	if st := m.Rounds[0][0].Stats; math.Abs(st.OrdersPerSec-25) > 1e-9 || math.Abs(st.Seconds-2) > 1e-9 {
		t.Errorf("orders/s %v over %v s, want 25 over 2 s", st.OrdersPerSec, st.Seconds)
	}
}

func mustDecode(t *testing.T, s string) *hdrHist {
	t.Helper()
	h, err := decodeHist(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
