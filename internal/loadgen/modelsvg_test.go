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

// TestModelsPictureInChromium: docs/loadtest-models.svg, the picture of docs/loadtest.md's
// load models, is self-contained (it fetches nothing) and opens in headless Chromium with a
// raw and a corrected bar per run; and ModelsSVG draws one from reports the same way.
func TestModelsPictureInChromium(t *testing.T) {
	t.Parallel()
	kept, err := os.ReadFile("../../docs/loadtest-models.svg")
	if err != nil {
		t.Fatal(err)
	}
	report := func(model string, raw, cor float64) Report {
		st := RunStats{Model: model, Requests: 100, Latency: Latencies{P99: raw}, LatencyCorrected: Latencies{P99: cor}}
		return Report{Scenario: Scenario{Model: model, Workers: 32, Rate: 250}, Rounds: [][]RunReport{{{Stats: st}}}}
	}
	var drawn bytes.Buffer
	if err := ModelsSVG(&drawn, "t", []Report{report(ModelClosed, 600, 5000), report(ModelOpen, 6800, 6900)}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	browser := servers.StartBrowser(t, time.Minute)
	for _, c := range []struct {
		name string
		svg  []byte
		runs int
	}{{"docs/loadtest-models.svg", kept, 3}, {"drawn", drawn.Bytes(), 2}} {
		if refs := regexp.MustCompile(`(href|src|url\()|https?://[^"]*`).FindAllString(string(c.svg), -1); len(refs) != 1 ||
			refs[0] != "http://www.w3.org/2000/svg" {
			t.Errorf("%s refers to %v: want nothing but its namespace", c.name, refs)
		}
		page := filepath.Join(dir, strings.ReplaceAll(c.name, "/", "_")+".svg")
		if err := os.WriteFile(page, c.svg, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(browser.Ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady("svg")); err != nil {
			t.Fatalf("open %s: %v", c.name, err)
		}
		dom, err := chromedp.Run(browser.Ctx, chromedp.OuterHTML("svg"))
		if err != nil {
			t.Fatal(err)
		}
		widths := regexp.MustCompile(`class="bar"[^>]* width="([0-9.]+)"`).FindAllStringSubmatch(dom, -1)
		if len(widths) != 2*c.runs || strings.Count(dom, `class="run"`) != c.runs {
			t.Errorf("%s: %d bars in %d runs, want 2 per run, %d runs", c.name, len(widths), strings.Count(dom, `class="run"`), c.runs)
		}
	}
}
