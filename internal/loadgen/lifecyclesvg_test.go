package loadgen

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestLifecyclePictureInChromium: LifecycleSVG's picture of an abandonment sale is
// self-contained and opens in headless Chromium with its four lines drawn through every
// second and the settled audit; the control, a sale with no timeline, draws no line.
func TestLifecyclePictureInChromium(t *testing.T) {
	t.Parallel()
	sale := &LifecycleReport{PayWithinMS: 2000, StopReason: StopPaidOut, Timeline: []LifecycleSecond{
		{S: 1, Reserved: 10, Paid: 6, Pending: 4, Audited: true},
		{S: 2, Reserved: 10, Paid: 7, Pending: 1, Stock: 2, Expired: 2, Audited: true},
		{S: 3, Reserved: 13, Resold: 3, Paid: 9, Pending: 1, Expired: 3, Audited: true},
		{S: 4, Reserved: 14, Resold: 4, Paid: 10, Expired: 4, Audited: true},
	}, Audit: LifecycleAudit{Source: ranDatabase, InitialStock: 10, Paid: 10, Ended: 4, Resold: 4}}
	browser := servers.StartBrowser(t, time.Minute)
	dir := t.TempDir()
	for _, c := range []struct {
		name     string
		l        *LifecycleReport
		segments int // " L" steps per line
	}{{"sale", sale, 4}, {"no timeline (control)", &LifecycleReport{Audit: sale.Audit}, 0}} {
		var svg bytes.Buffer
		if err := LifecycleSVG(&svg, "redis", c.l); err != nil {
			t.Fatal(err)
		}
		if refs := regexp.MustCompile(`(href|src|url\()|https?://[^"]*`).FindAllString(svg.String(), -1); len(refs) != 1 ||
			refs[0] != "http://www.w3.org/2000/svg" {
			t.Errorf("%s refers to %v: want nothing but its namespace", c.name, refs)
		}
		page := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".svg")
		if err := os.WriteFile(page, svg.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(browser.Ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady("svg")); err != nil {
			t.Fatalf("open %s: %v", c.name, err)
		}
		lines, err := chromedp.Run(browser.Ctx, chromedp.Evaluate[[]string](
			`[...document.querySelectorAll("path.series")].map(p => p.dataset.name + ":" + p.getAttribute("d"))`))
		if err != nil {
			t.Fatal(err)
		}
		text, err := chromedp.Run(browser.Ctx, chromedp.Evaluate[string](`document.querySelector("svg").textContent`))
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != len(lifecycleSeries) || !strings.Contains(text, "stock 0 + pending 0 + paid 10 = 10 of 10") {
			t.Errorf("%s: lines %q, text %q: want reserved, paid, expired, resold and the settled audit", c.name, lines, text)
		}
		for _, l := range lines {
			if got := strings.Count(l, " L"); got != c.segments {
				t.Errorf("%s: line %q has %d steps, want %d", c.name, l, got, c.segments)
			}
		}
	}
}
