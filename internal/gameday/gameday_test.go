//go:build linux

package gameday_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// modeEnv names the variable that runs the whole schedule (SECKILL_GAMEDAY=full: every cell
// of every fault, `make gameday`); without it each fault runs one cell (make test).
const modeEnv = "SECKILL_GAMEDAY"

// pageEnv names the variable that says where the page goes (`make gameday` sets it); without
// it, into the test's temporary directory, or $SERVERS_LOGDIR when that is set.
const pageEnv = "SECKILL_GAMEDAY_PAGE"

// Phases of each fault: buyers sell warm before it, and post after its heal.
const (
	warm = 4 * time.Second
	post = 5 * time.Second
)

// faultRun is one fault of a game day as it happened.
type faultRun struct {
	*fault
	Cells                []*cell
	Verdicts             []verdict
	Inject, Heal, End    time.Time // the fault's start, its heal, the end of its selling
	InjectNote, HealNote string
	Alerts               alertVerdict
}

// TestGameDay runs the deployment as a team runs it on one machine (startDeployment) and
// sells through the load balancer while the schedule's faults hit it one after another
// (schedule), each during the sale of a product per cell: new buyers at a steady rate, more
// of them than the stock. For every cell it judges the answers (judge: none lost, none that
// PostgreSQL contradicts, the history linearizable) and measures the seconds unavailable and
// to recover; for every fault, the alerts that reached the webhook (each expected one in its
// time, no other). It prints a table and writes one HTML page (report.go), opened in
// Chromium. SECKILL_GAMEDAY=full runs every cell; without it, one per fault.
func TestGameDay(t *testing.T) {
	testenv.SkipShort(t, "a whole deployment (a game day)")
	full := false
	switch os.Getenv(modeEnv) {
	case "", "0":
	case "full":
		full = true
	default:
		t.Fatalf("%s=%q: want full or nothing", modeEnv, os.Getenv(modeEnv))
	}
	log := timeline(t)
	begun := time.Now()
	d := startDeployment(t, log)
	r := &report{Full: full, Start: time.Now()}
	users := &atomic.Int64{}
	time.Sleep(3 * time.Second) // healthy, idle: no alert may fire
	for _, f := range schedule() {
		cells := []string{f.One}
		if full {
			cells = f.Cells
		}
		r.Faults = append(r.Faults, runFault(t, d, f, cells, users, log))
		if t.Failed() {
			break
		}
	}
	r.End = time.Now()
	r.Spans = spans(d.hook.all())
	judgeAlerts(r)
	r.Setup = r.Start.Sub(begun)
	page := pagePath(t)
	if err := r.writePage(page); err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(os.Stdout, r.table())
	fmt.Fprintf(os.Stdout, "game day page: %s\n", page)
	checkPage(t, page, r)
	for _, fr := range r.Faults {
		for _, v := range fr.Verdicts {
			if !v.ok(fr.QueueLoss) {
				t.Errorf("%s × %s: lost %d, untrue %d %q, queued lost %d, history %s %s", v.Fault, v.Strategy, v.Lost,
					len(v.Untrue), first(v.Untrue, 5), v.QueuedLost, v.History, v.Err)
			}
		}
		if !fr.Alerts.ok() {
			t.Errorf("%s: alerts missing %v, unexpected %v, misrouted %v", fr.Name, fr.Alerts.Missing, fr.Alerts.Unexpected, fr.Alerts.Misrouted)
		}
	}
	if len(r.Healthy) > 0 {
		t.Errorf("alerts fired before any fault: %v", r.Healthy)
	}
}

// runFault sells one product per cell through the load balancer while f hits the
// deployment, then sells each out, judges each, and waits for the alerts to resolve.
func runFault(t *testing.T, d *deployment, f *fault, strategies []string, users *atomic.Int64, log func(string, ...any)) *faultRun {
	t.Helper()
	rate := 10.0
	if len(strategies) > 2 {
		rate = 7
	}
	// Stock enough to sell through the fault, not so much that the buyers after it never
	// empty it: about 60% of the buyers of the fault's window.
	window := warm + post + max(f.Hold, 5*time.Second) + 5*time.Second
	stock := int(rate * window.Seconds() * 0.6)
	fr := &faultRun{fault: f}
	for _, s := range strategies {
		c := &cell{Fault: f.Name, Strategy: s, Stock: stock, users: users}
		c.Product = d.createProduct(t, "game day "+f.Name+" "+s, s, stock)
		fr.Cells = append(fr.Cells, c)
	}
	b := newBuyers(d.lb.Base)
	b.start(fr.Cells, rate)
	defer b.stop()
	time.Sleep(warm)
	for _, c := range fr.Cells {
		if c.soldOut.Load() || !slices.ContainsFunc(c.attempts(), attempt.served) {
			t.Fatalf("%s × %s: sold out, or nothing sold, before the fault: %v", f.Name, c.Strategy, classes(c.attempts()))
		}
	}
	fr.Inject = time.Now()
	fr.InjectNote = f.inject(t, d)
	log("%s: %s", f.Name, fr.InjectNote)
	if wait := time.Until(fr.Inject.Add(f.Hold)); wait > 0 {
		time.Sleep(wait)
	}
	fr.Heal = time.Now()
	if f.heal != nil {
		fr.HealNote = f.heal(t, d)
		log("%s: %s", f.Name, fr.HealNote)
	}
	time.Sleep(post)
	b.stop()
	fr.End = time.Now()
	for _, c := range fr.Cells {
		v := finishAndJudge(t, d, b, c, fr.Inject, fr.End)
		fr.Verdicts = append(fr.Verdicts, v)
		log("%s × %s: %v; last not served: %s", f.Name, c.Strategy, v.Classes, lastNotServed(c.attempts(), fr.Inject, 3))
	}
	still := d.hook.awaitQuiet(quietWait(len(strategies)))
	log("%s: judged %d cells; alerts still firing: %v", f.Name, len(fr.Cells), still)
	return fr
}

// quietWait bounds the wait for the alerts to resolve after a fault, in which the sale's
// own alerts (5xx, unavailability) end; the scaled burn-rate alert holds an outage for its
// 30-minute window (2 minutes here), longer than any wait. An alert still firing when the
// next fault begins is carried: expected there, it counts as seen; it is never new there.
func quietWait(cells int) time.Duration {
	if cells > 1 {
		return 30 * time.Second
	}
	return 4 * time.Second
}

// finishAndJudge sells c out with bursts of new buyers (60 s at most), waits until its queue
// (if any) is drained, and judges it against PostgreSQL.
func finishAndJudge(t *testing.T, d *deployment, b *buyers, c *cell, fault, end time.Time) verdict {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var tr truth
	var err error
	for ctx.Err() == nil {
		if c.Strategy == "queue" {
			if _, err = d.admin.AwaitDrained(ctx, c.Product, 50*time.Millisecond); err != nil {
				continue
			}
		}
		if tr, err = readTruth(ctx, d.db, c.Product); err == nil && tr.Stock == 0 && c.soldOut.Load() {
			break
		}
		b.burst(c, 10)
	}
	if err == nil && (tr.Stock != 0 || !c.soldOut.Load()) {
		err = fmt.Errorf("not sold out 60 s after the fault's sale: %d left in PostgreSQL", tr.Stock)
	}
	if err == nil {
		b.retryAll(c)
	}
	v := judge(c, tr, fault, end)
	if err != nil {
		v.Err = err.Error()
	}
	return v
}

// pagePath is where the page goes: $SECKILL_GAMEDAY_PAGE, else $SERVERS_LOGDIR/gameday.html,
// else the test's temporary directory.
func pagePath(t *testing.T) string {
	if p := os.Getenv(pageEnv); p != "" {
		return p
	}
	if dir := os.Getenv("SERVERS_LOGDIR"); dir != "" {
		return filepath.Join(dir, "gameday.html")
	}
	return filepath.Join(t.TempDir(), "gameday.html")
}

// timeline returns a function that logs with the time since it was made.
func timeline(t *testing.T) func(format string, args ...any) {
	start := time.Now()
	return func(format string, args ...any) {
		t.Helper()
		t.Logf("+%.1fs "+format, append([]any{time.Since(start).Seconds()}, args...)...)
	}
}

// classes counts attempts by class.
func classes(tries []attempt) map[string]int {
	m := map[string]int{}
	for _, a := range tries {
		m[a.class()]++
	}
	return m
}

// lastNotServed says the last n attempts not served: their class and when they were sent,
// after the fault.
func lastNotServed(tries []attempt, fault time.Time, n int) string {
	var out []string
	for _, a := range slices.Backward(tries) {
		if !a.served() && len(out) < n {
			out = append(out, fmt.Sprintf("%s at %+.1fs", a.class(), a.Sent.Sub(fault).Seconds()))
		}
	}
	return fmt.Sprint(out)
}

// first is at most n of s.
func first(s []string, n int) []string { return s[:min(n, len(s))] }
