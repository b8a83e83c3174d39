package loadgen

import (
	"math"
	"testing"
	"time"
)

// TestStagesArrivals: the flash-sale stages schedule as many arrivals as the integral of their
// ramps, in order, and a pacer driven by a fake clock (as vegeta drives it) sends exactly those.
func TestStagesArrivals(t *testing.T) {
	t.Parallel()
	st, err := ParseStages("0s:0,2s:20000,30s:20000,5s:0")
	if err != nil {
		t.Fatal(err)
	}
	if st.Total() != 37*time.Second {
		t.Fatalf("total %s, want 37s", st.Total())
	}
	// 0→20000/s over 2 s, 20000/s for 30 s, 20000→0/s over 5 s.
	const want = 20000 + 600000 + 50000
	if got := st.Arrivals(); math.Abs(got-want) > 1e-6 {
		t.Fatalf("integral %v, want %v", got, float64(want))
	}
	s := newSchedule(0, st)
	var n, before2s, before32s int
	prev := time.Duration(-1)
	for k := uint64(0); ; k++ {
		at, ok := s.at(k)
		if !ok {
			break
		}
		if at < prev || at >= st.Total() {
			t.Fatalf("arrival %d at %s after %s (end %s)", k, at, prev, st.Total())
		}
		prev = at
		n++
		if at < 2*time.Second {
			before2s++
		}
		if at < 32*time.Second {
			before32s++
		}
	}
	for _, c := range []struct {
		name      string
		got, want int
	}{{"all", n, want}, {"ramp up", before2s, 20000}, {"ramp up and hold", before32s, 620000}} {
		if c.got < c.want-1 || c.got > c.want+1 {
			t.Errorf("%s: %d arrivals, want %d ±1", c.name, c.got, c.want)
		}
	}

	var elapsed time.Duration
	var hits uint64
	p := schedulePacer{s: s}
	for {
		wait, stop := p.Pace(elapsed, hits)
		if stop {
			break
		}
		elapsed += wait
		hits++
	}
	if int(hits) != n || elapsed >= st.Total() {
		t.Errorf("paced %d hits until %s, want %d before %s", hits, elapsed, n, st.Total())
	}
	if r := p.Rate(time.Second); math.Abs(r-10000) > 1e-6 {
		t.Errorf("rate at 1s = %v, want 10000 (half way up the ramp)", r)
	}
}

// TestConstantSchedule: -rate N is arrival k at k/N s, for as long as the attack lasts; a pacer
// behind its schedule does not wait, and one with a limit stops at it.
func TestConstantSchedule(t *testing.T) {
	t.Parallel()
	s := newSchedule(1000, nil)
	for _, k := range []uint64{0, 1, 999, 3_600_000} {
		if at, ok := s.at(k); !ok || at != time.Duration(k)*time.Millisecond {
			t.Errorf("arrival %d at %s, %v; want %s", k, at, ok, time.Duration(k)*time.Millisecond)
		}
	}
	if got := s.count(time.Second); got != 1000 {
		t.Errorf("count(1s) = %v, want 1000", got)
	}
	p := schedulePacer{s: s, max: 5}
	if wait, stop := p.Pace(0, 3); stop || wait != 3*time.Millisecond {
		t.Errorf("Pace(0, 3) = %s, %v; want 3ms, false", wait, stop)
	}
	if wait, stop := p.Pace(time.Second, 3); stop || wait != 0 {
		t.Errorf("behind: Pace(1s, 3) = %s, %v; want 0, false", wait, stop)
	}
	if _, stop := p.Pace(0, 5); !stop {
		t.Error("Pace at the limit did not stop")
	}
}

// TestParseStages: stages read back as written; malformed ones are refused.
func TestParseStages(t *testing.T) {
	t.Parallel()
	st, err := ParseStages("0s:0, 2s:20000,30s:20000,5s:0")
	if err != nil || st.String() != "0s:0,2s:20000,30s:20000,5s:0" {
		t.Fatalf("ParseStages = %v, %v", st, err)
	}
	for _, bad := range []string{"", "2s", "x:1", "-1s:5", "1s:-3", "0s:5", "1s:NaN"} {
		if _, err := ParseStages(bad); err == nil {
			t.Errorf("ParseStages(%q) accepted", bad)
		}
	}
	// A stage that jumps (duration 0) and a stage of rate 0 in the middle.
	s := newSchedule(0, Stages{{0, 100}, {time.Second, 100}, {0, 0}, {time.Second, 0}, {0, 50}, {time.Second, 50}})
	if got := s.count(3 * time.Second); math.Abs(got-150) > 1e-9 {
		t.Errorf("count = %v, want 100 + 0 + 50", got)
	}
	if at, ok := s.at(100); !ok || at != 2*time.Second {
		t.Errorf("arrival 100 at %s, %v; want 2s, after the silent second", at, ok)
	}
}

// TestEpochPacer: an attack's pacer runs on the attack's epoch whatever elapsed time vegeta
// passes it (vegeta's own start is later), and stops the attack at its end on that epoch.
func TestEpochPacer(t *testing.T) {
	t.Parallel()
	p := epochPacer{Pacer: schedulePacer{s: newSchedule(1000, nil)}, epoch: time.Now().Add(-time.Second), end: 2 * time.Second}
	// vegeta says nothing has elapsed; on the epoch, arrival 500 was due half a second ago.
	if wait, stop := p.Pace(0, 500); stop || wait != 0 {
		t.Errorf("Pace(0, 500) = %s, %v; want 0, false: due 0.5 s before now on the epoch", wait, stop)
	}
	if wait, stop := p.Pace(0, 1500); stop || wait <= 0 || wait > 500*time.Millisecond {
		t.Errorf("Pace(0, 1500) = %s, %v; want at most 0.5 s: due 1.5 s after the epoch", wait, stop)
	}
	if wait, stop := p.Pace(0, 2000); stop || wait <= 0 {
		t.Errorf("Pace(0, 2000) = %s, %v; want a wait: due at the very end", wait, stop)
	}
	if _, stop := p.Pace(0, 2001); !stop {
		t.Error("Pace(0, 2001) did not stop: due after the end")
	}
}
