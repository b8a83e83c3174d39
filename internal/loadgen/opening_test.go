package loadgen

import (
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// TestOpeningPlan: 100 buyers within 100 ms, 20 of them hitting 3 times before a T0 2 s after
// the epoch. The 60 early arrivals are all due before T0 - guard, the first at the epoch; the
// 100 of the burst all within [T0, T0+window), evenly; the 161st is due never.
func TestOpeningPlan(t *testing.T) {
	t.Parallel()
	o := Opening{In: 2 * time.Second, Burst: 100, Window: 100 * time.Millisecond, EarlyShare: 0.2, EarlyHits: 3}
	epoch := time.Now()
	p, err := newOpeningPlan(o, epoch, epoch.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	s := newSchedule(0, p.stages)
	t0 := p.t0At()
	for k := range uint64(o.requests()) {
		due, ok := s.at(k)
		switch {
		case !ok:
			t.Fatalf("arrival %d: never due", k)
		case k < 60 && due >= t0-openingGuard:
			t.Errorf("early arrival %d due at %v, want before %v", k, due, t0-openingGuard)
		case k >= 60 && (due < t0 || due >= t0+o.Window):
			t.Errorf("burst arrival %d due at %v, want in [%v, %v)", k, due, t0, t0+o.Window)
		}
	}
	if due, _ := s.at(0); due != 0 {
		t.Errorf("first arrival due at %v, want the epoch", due)
	}
	if due, ok := s.at(160); ok {
		t.Errorf("arrival 160 due at %v, want none after the %d", due, o.requests())
	}
	if gap := mustAt(t, s, 61) - mustAt(t, s, 60); gap < 900*time.Microsecond || gap > 1100*time.Microsecond {
		t.Errorf("burst arrivals %v apart, want 1 ms (100 within 100 ms)", gap)
	}
	// Nobody early: the first arrival is due at T0 itself, the last within the window.
	o.EarlyShare = 0
	q, err := newOpeningPlan(o, epoch, epoch.Add(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	qs := newSchedule(0, q.stages)
	if first, last := mustAt(t, qs, 0), mustAt(t, qs, 99); first != t0 || last >= t0+o.Window {
		t.Errorf("no early buyers: the burst due from %v to %v, want from T0 %v, within %v", first, last, t0, o.Window)
	}
	if _, err := newOpeningPlan(o, epoch, epoch.Add(openingGuard)); err == nil {
		t.Error("a T0 within the guard of the epoch: planned, want an error")
	}
}

func mustAt(t *testing.T, s schedule, k uint64) time.Duration {
	t.Helper()
	d, ok := s.at(k)
	if !ok {
		t.Fatalf("arrival %d never due", k)
	}
	return d
}

// TestOpeningTargeter: each early buyer's hits come first, in turns, then every buyer once
// in a shuffled order; then the targeter runs dry.
func TestOpeningTargeter(t *testing.T) {
	t.Parallel()
	o := Opening{Burst: 10, EarlyShare: 0.2, EarlyHits: 2}
	tr := openingTargeter([]string{"http://a", "http://b"}, o, 100, 1, nil)
	var users []string
	for {
		var tgt vegeta.Target
		if err := tr(&tgt); err != nil {
			if err != vegeta.ErrNoTargets {
				t.Fatal(err)
			}
			break
		}
		users = append(users, strings.TrimSuffix(strings.TrimPrefix(string(tgt.Body), `{"user_id":`), "}"))
	}
	if len(users) != 14 || strings.Join(users[:4], ",") != "100,101,100,101" {
		t.Fatalf("users %v, want 4 early hits of 100 and 101, then 10 buyers", users)
	}
	seen := map[string]bool{}
	for _, u := range users[4:] {
		seen[u] = true
	}
	if len(seen) != 10 || strings.Join(users[4:], ",") == "100,101,102,103,104,105,106,107,108,109" {
		t.Errorf("burst %v, want each of the 10 buyers once, shuffled", users[4:])
	}
}

// TestOpeningReport sums a made-up opening of 2 units: an early buyer refused before T0 who
// wins at T0, an on-time winner, an on-time loser. The negative controls: a unit admitted
// before T0, an order PostgreSQL dated before starts_at, and a third unit of two, each fail
// the verdict.
func TestOpeningReport(t *testing.T) {
	t.Parallel()
	o := Opening{In: time.Second, Burst: 3, Window: 100 * time.Millisecond, EarlyShare: 0.34, EarlyHits: 1}
	epoch := time.Now()
	p, err := newOpeningPlan(o, epoch, epoch.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	l := newOpeningLog(p)
	t0 := p.t0
	l.add(1, 0, t0.Add(-500*time.Millisecond), time.Millisecond, SaleNotStarted)
	l.add(1, 1, t0.Add(time.Millisecond), 10*time.Millisecond, Bought)
	l.add(2, 2, t0.Add(40*time.Millisecond), 20*time.Millisecond, Bought)
	l.add(3, 3, t0.Add(90*time.Millisecond), 1500*time.Millisecond, SoldOut)
	r := l.report(2)
	if r.Early[SaleNotStarted] != 1 || r.Burst.Sent != 3 || r.Admitted != 2 || r.AdmittedBeforeT0 != 0 {
		t.Errorf("report %+v", r)
	}
	if r.SellOutMS == nil || *r.SellOutMS != 60 {
		t.Errorf("sell-out %v, want 60 ms (T0+40ms sent, 20 ms to answer)", r.SellOutMS)
	}
	if f := r.FirstSecond; f.Outcomes[Bought] != 2 || f.Outcomes.Total() != 2 || f.Outstanding != 1 {
		t.Errorf("first second %+v, want 2 bought, 1 answered after it", f)
	}
	if e, at := r.Fairness.Early, r.Fairness.OnTime; e.Buyers != 1 || e.Won != 1 || at.Buyers != 2 || at.Won != 1 || at.Share != 0.5 {
		t.Errorf("fairness %+v", r.Fairness)
	}
	v := verdict{OK: true, Label: "PASS"}
	judgeOpening(&v, "redis", 2, r)
	if !v.OK {
		t.Errorf("verdict %+v, want PASS", v)
	}
	for name, spoil := range map[string]func(*OpeningReport){
		"admitted before T0":     func(r *OpeningReport) { r.AdmittedBeforeT0 = 1 },
		"order before starts_at": func(r *OpeningReport) { r.Orders = &OpeningOrders{Count: 2, BeforeStart: 1} },
		"over the stock":         func(r *OpeningReport) { r.Admitted = 3 },
		"nothing sent at T0":     func(r *OpeningReport) { r.Burst.Sent = 0 },
	} {
		bad := *r
		spoil(&bad)
		v := verdict{OK: true, Label: "PASS"}
		judgeOpening(&v, "redis", 2, &bad)
		if v.OK || len(v.Problems) != 1 {
			t.Errorf("%s: verdict %+v, want one problem", name, v)
		}
	}
}

// TestOpeningValidate: the flags' bounds, and what an opening cannot go with.
func TestOpeningValidate(t *testing.T) {
	t.Parallel()
	c := DefaultConfig()
	c.Model, c.AdminToken, c.Targets = ModelOpening, "t", []string{"http://127.0.0.1:1"}
	if err := c.Validate(); err != nil {
		t.Fatalf("the default opening: %v", err)
	}
	c.Opening.In, c.Opening.Window, c.Baseline, c.Stages = 0, 0, true, Stages{{time.Second, 1}}
	err := c.Validate()
	for _, want := range []string{"-opening-in", "-burst-window", "-baseline", "-stages"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to name %s", err, want)
		}
	}
}
