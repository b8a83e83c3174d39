package labrun

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestReportRendersInChromium writes a report of three cells (an oversell, a stall, a safe
// sale) and opens it in headless Chromium: once its script ran, the DOM must hold a chart per
// cell whose orders and stock lines follow the samples, with the lock history's check in the
// caption, and the matrix must mark the cell that differs from its expectation, and the page
// must throw no script error. `make up` installs
// Chromium (Debian's chromium) when missing.
func TestReportRendersInChromium(t *testing.T) {
	series := func(orders ...int) []Point {
		var pts []Point
		for i, o := range orders {
			pts = append(pts, Point{MS: int64(i * 100), Orders: o, Stock: max(0, 10-o)})
		}
		return pts
	}
	res := Result{Started: time.Now(), Seconds: 3, Cells: []Cell{
		{Lock: "none", Scenario: "crowd", Expected: Oversold, Verdict: Oversold, Oversold: 4, InitialStock: 10, Orders: 14, Series: series(0, 5, 10, 14),
			History: &HistoryCheck{Verdict: "illegal", Expected: "illegal", Ops: 420, Seconds: 0.02, Page: "/tmp/lab/locks-1.html"}},
		{Lock: "setnx", Scenario: "crash", Expected: Stalled, Verdict: Stalled, InitialStock: 10, Stock: 7, Orders: 3,
			StuckKey: `lab:{p:2}:lock = "42:", no expiry`, Series: series(0, 3, 3, 3)},
		{Lock: "dlock", Scenario: "pause", Expected: Safe, Verdict: Oversold, Oversold: 1, InitialStock: 10, Orders: 11, Series: series(0, 6, 11)},
	}}
	dir := t.TempDir()
	page := filepath.Join(dir, "lab.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(f, res); err != nil {
		t.Fatal(err)
	}
	f.Close()
	browser := servers.StartBrowser(t, time.Minute)
	err = chromedp.Do(browser.Ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(`body[data-rendered]`))
	if err != nil {
		t.Fatalf("open the report: %v (script errors: %v)", err, browser.ScriptErrors())
	}
	dom, err := chromedp.Run(browser.Ctx, chromedp.OuterHTML("html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dom, `data-rendered="3"`) {
		t.Fatalf("the page's script did not render the 3 cells; DOM:\n%.2000s", dom)
	}
	charts := regexp.MustCompile(`<svg class="chart"[^>]*data-lock="([a-z-]+)"`).FindAllStringSubmatch(dom, -1)
	if len(charts) != 3 {
		t.Fatalf("%d charts in the DOM, want 3", len(charts))
	}
	for _, cls := range []string{"orders", "stock"} {
		paths := regexp.MustCompile(`<path class="`+cls+`" d="(M[^"]+)"`).FindAllStringSubmatch(dom, -1)
		if len(paths) != 3 {
			t.Fatalf("%d %s lines, want 3", len(paths), cls)
		}
		if n := strings.Count(paths[0][1], "L"); n != 3 {
			t.Errorf("the first %s line has %d segments, want 3 (one per sample after the first): %s", cls, n, paths[0][1])
		}
	}
	if n := strings.Count(dom, `class="initial"`); n != 3 {
		t.Errorf("%d initial-stock lines, want 3", n)
	}
	if !strings.Contains(dom, `class="oversold unexpected"`) || strings.Count(dom, ` unexpected"`) != 1 {
		t.Errorf("the matrix should mark exactly the dlock × pause cell as unexpected")
	}
	if !strings.Contains(dom, "lock history illegal (420 operations, checked in 0.02 s); page /tmp/lab/locks-1.html") {
		t.Errorf("the none × crowd cell's caption does not give its lock history's check")
	}
	if strings.Contains(dom, "http://") && !strings.Contains(dom, "http://www.w3.org/2000/svg") {
		t.Errorf("the page refers to the network")
	}
	if e := browser.ScriptErrors(); len(e) > 0 {
		t.Errorf("the page threw: %v", e)
	}
}
