package labrun

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestReportRendersInChromium writes a report of three cells (an oversell, a stall, a safe
// sale) and opens it in headless Chromium: once its script ran, the DOM must hold a chart per
// cell whose orders and stock lines follow the samples, and the matrix must mark the cell that
// differs from its expectation. `make up` installs Chromium (Debian's chromium) when missing.
func TestReportRendersInChromium(t *testing.T) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: `make up` installs it (Debian's chromium package)")
	}
	series := func(orders ...int) []Point {
		var pts []Point
		for i, o := range orders {
			pts = append(pts, Point{MS: int64(i * 100), Orders: o, Stock: max(0, 10-o)})
		}
		return pts
	}
	res := Result{Started: time.Now(), Seconds: 3, Cells: []Cell{
		{Lock: "none", Scenario: "crowd", Expected: Oversold, Verdict: Oversold, Oversold: 4, InitialStock: 10, Orders: 14, Series: series(0, 5, 10, 14)},
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
	cmd := exec.Command(browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+filepath.Join(dir, "profile"), "--dump-dom", "file://"+page)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium --dump-dom: %v", err)
	}
	dom := string(out)
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
	if strings.Contains(dom, "http://") && !strings.Contains(dom, "http://www.w3.org/2000/svg") {
		t.Errorf("the page refers to the network")
	}
}
