//go:build linux

package gameday_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// pageFacts is what the page shows, as Chromium reads it.
type pageFacts struct {
	Title, Verdict             string
	Bands, Cells, Faults, Bars int
	Alerts                     int
	Width                      float64 // of the timeline, as laid out
}

// checkPage opens the page in Chromium and checks that it shows the report: its verdict, a
// band per fault, a row per fault and per cell, bars of answers and the alerts, and that it
// refers to nothing outside itself.
func checkPage(t *testing.T, path string, r *report) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, ref := range regexp.MustCompile(`(href|src)=|url\(|https?://[^"]*`).FindAllString(string(b), -1) {
		if ref != "http://www.w3.org/2000/svg" {
			t.Errorf("the page refers to %q: want it self-contained", ref)
		}
	}
	browser := servers.StartBrowser(t, time.Minute)
	if err := chromedp.Do(browser.Ctx, chromedp.Navigate("file://"+path), chromedp.WaitReady("#cells")); err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	got, err := chromedp.Run(browser.Ctx, chromedp.Evaluate[pageFacts](`({
		Title: document.title, Verdict: document.querySelector("#verdict").textContent,
		Bands: document.querySelectorAll("#timeline rect.band").length,
		Cells: document.querySelectorAll("#cells tbody tr").length,
		Faults: document.querySelectorAll("#faults tbody tr").length,
		Bars: document.querySelectorAll("#timeline rect.bar").length,
		Alerts: document.querySelectorAll("#timeline rect.alert").length,
		Width: document.querySelector("#timeline").getBoundingClientRect().width})`))
	if err != nil {
		t.Fatal(err)
	}
	cells := 0
	for _, fr := range r.Faults {
		cells += len(fr.Verdicts)
	}
	want := map[bool]string{true: "PASS", false: "FAIL"}[r.passed()]
	if got.Verdict != want || !strings.Contains(got.Title, want) || got.Bands != len(r.Faults) || got.Faults != len(r.Faults) ||
		got.Cells != cells || got.Bars == 0 || got.Alerts != len(r.Spans) || got.Width < 1000 {
		t.Errorf("the page shows %+v: want verdict %s, %d bands and faults, %d cells, bars, %d alerts, a timeline 1000 px wide or more",
			got, want, len(r.Faults), cells, len(r.Spans))
	}
	if errs := browser.ScriptErrors(); len(errs) > 0 {
		t.Errorf("the page threw: %v", errs)
	}
}

// passed reports whether every cell, every fault's alerts and the healthy start passed.
func (r *report) passed() bool {
	ok := len(r.Healthy) == 0
	for _, fr := range r.Faults {
		ok = ok && fr.Alerts.ok()
		for _, v := range fr.Verdicts {
			ok = ok && v.ok(fr.QueueLoss)
		}
	}
	return ok
}

// smallSale is a cell of a sale of 2 units to 4 buyers, as the game day records one: users 1
// and 2 bought (orders 11 and 12), 3 and 4 were told sold_out, 1 and 3 retried; and PostgreSQL's
// truth of it.
func smallSale(start time.Time) (*cell, truth) {
	c := &cell{Fault: "control", Strategy: "pessimistic", Product: 7, Stock: 2, users: &atomic.Int64{}}
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	c.tries = []attempt{
		{User: 1, Sent: at(0), Wrote: true, Done: at(0.1), Status: 201, Order: 11},
		{User: 2, Sent: at(0.2), Wrote: true, Done: at(0.3), Status: 201, Order: 12},
		{User: 3, Sent: at(1), Wrote: true, Done: at(1.1), Status: 503, Code: api.CodeUnavailable},
		{User: 4, Sent: at(2), Wrote: true, Done: at(2.1), Status: 409, Code: api.CodeSoldOut},
		{User: 5, Sent: at(2.2), Wrote: true, Done: at(2.3), Status: 409, Code: api.CodeSoldOut},
	}
	c.retries = []attempt{ // each buyer's purchase sent again once the sale was over
		{User: 1, Wrote: true, Status: 409, Code: api.CodeAlreadyPurchased, Order: 11},
		{User: 3, Wrote: true, Status: 409, Code: api.CodeSoldOut},
	}
	return c, truth{Initial: 2, Stock: 0, Orders: map[int64]int64{1: 11, 2: 12}}
}

// TestJudgeSeesUntrueAnswers is the judge's negative control: the record of a small sale
// passes as recorded; with one answer made untrue (a sold_out turned into a 201 naming an
// order no one has), with an order taken from PostgreSQL's truth, with an answer lost, or with
// a retry that disagrees with PostgreSQL, it fails, and says why.
func TestJudgeSeesUntrueAnswers(t *testing.T) {
	start := time.Now().Add(-time.Minute)
	c, tr := smallSale(start)
	if v := judge(c, tr, start.Add(time.Second), start.Add(time.Minute)); !v.ok(false) || v.UnavailableS != 1 || v.RecoverS != 0 {
		t.Fatalf("the true record: %+v, want it to pass with 1 s unavailable (user 3's second), recovered at once", v)
	}
	for _, tc := range []struct {
		name   string
		change func(c *cell, tr *truth)
		check  func(v verdict) bool
	}{
		{"a sold_out turned into a 201", func(c *cell, _ *truth) {
			c.tries[4].Status, c.tries[4].Code, c.tries[4].Order = 201, "", 99
		}, func(v verdict) bool { return len(v.Untrue) >= 2 && v.History == string(history.Illegal) }},
		{"an acknowledged order missing", func(_ *cell, tr *truth) {
			delete(tr.Orders, 2)
			tr.Stock = 1
		}, func(v verdict) bool { return len(v.Untrue) >= 1 }},
		{"an order for a buyer told sold_out", func(_ *cell, tr *truth) {
			tr.Orders[4] = 14
		}, func(v verdict) bool { return len(v.Untrue) >= 2 }},
		{"a retry answered sold_out to a buyer with an order", func(c *cell, _ *truth) {
			c.retries = append(c.retries, attempt{User: 2, Wrote: true, Status: 409, Code: api.CodeSoldOut})
		}, func(v verdict) bool { return len(v.Untrue) == 1 }},
		{"a retry answered already_purchased to a buyer without one", func(c *cell, _ *truth) {
			c.retries = append(c.retries, attempt{User: 4, Wrote: true, Status: 409, Code: api.CodeAlreadyPurchased, Order: 2})
		}, func(v verdict) bool { return len(v.Untrue) == 1 }},
		{"an answer lost", func(c *cell, _ *truth) {
			c.tries[3].Status, c.tries[3].Code = 0, ""
		}, func(v verdict) bool { return v.Lost == 1 }},
	} {
		c, tr := smallSale(start)
		tc.change(c, &tr)
		v := judge(c, tr, start.Add(time.Second), start.Add(time.Minute))
		if v.ok(false) || !tc.check(v) {
			t.Errorf("%s: the judge says %+v: want it failed, and why", tc.name, v)
		}
		t.Logf("%s: untrue %q, lost %d, history %s", tc.name, v.Untrue, v.Lost, v.History)
	}
}

// TestGameDayPageInChromium writes the page of a small made-up game day (two faults, one
// failing cell, two alerts) and opens it in Chromium (checkPage).
func TestGameDayPageInChromium(t *testing.T) {
	start := time.Now().Add(-time.Minute)
	good, tr := smallSale(start)
	bad, badTruth := smallSale(start)
	delete(badTruth.Orders, 1)
	r := &report{Start: start, End: start.Add(50 * time.Second), Setup: 30 * time.Second}
	f := schedule()
	r.Faults = []*faultRun{
		{fault: f[0], Cells: []*cell{good}, Inject: start.Add(time.Second), Heal: start.Add(9 * time.Second), End: start.Add(15 * time.Second),
			Verdicts: []verdict{judge(good, tr, start.Add(time.Second), start.Add(time.Minute))}},
		{fault: f[2], Cells: []*cell{bad}, Inject: start.Add(20 * time.Second), Heal: start.Add(21 * time.Second), End: start.Add(30 * time.Second),
			Verdicts: []verdict{judge(bad, badTruth, start.Add(20*time.Second), start.Add(time.Minute))}},
	}
	r.Spans = []alertSpan{
		{Name: "SeckillReplicaDown", Severity: "critical", Receiver: "/seckill/page", Start: start.Add(3 * time.Second), End: start.Add(12 * time.Second)},
		{Name: "SeckillLBDown", Severity: "critical", Receiver: "/seckill/page", Start: start.Add(21 * time.Second)},
		{Name: "SeckillInconsistent", Key: "alertname=SeckillInconsistent", Severity: "critical", Receiver: "/seckill/page", Start: start.Add(5 * time.Second), End: start.Add(6 * time.Second)},
		{Name: "SeckillInconsistent", Key: "alertname=SeckillInconsistent", Severity: "critical", Receiver: "/seckill/page", Start: start.Add(25 * time.Second)},
	}
	judgeAlerts(r)
	// SeckillInconsistent is unexpected where it is new (the first fault), not where it
	// fires again (the second).
	if r.passed() || r.Faults[0].Alerts.ok() || !r.Faults[1].Alerts.ok() {
		t.Fatalf("the made-up day: passed %v, the faults' alerts %+v, %+v: want a failed day, the first fault's alerts failed (an unexpected alert), the second's passed",
			r.passed(), r.Faults[0].Alerts, r.Faults[1].Alerts)
	}
	page := filepath.Join(t.TempDir(), "gameday.html")
	if err := r.writePage(page); err != nil {
		t.Fatal(err)
	}
	t.Log(r.table())
	checkPage(t, page, r)
}
