package liveui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// cardTimeline is what the test reads of a lab cell's lock timeline under its card.
type cardTimeline struct {
	Lanes     int      `json:"lanes"`
	Red       int      `json:"red"`
	Pause     int      `json:"pause"`
	Refused   []string `json:"refused"`
	Cancelled []string `json:"cancelled"`
	Oversold  []string `json:"oversold"`
	Wide      bool     `json:"wide"`
	// HoldFill is a hold's fill as the browser computed it: the timeline's style applied.
	HoldFill string `json:"holdFill"`
}

const readCardTimeline = `(name => { const c = document.querySelector('section.item[data-name="' + name + '"]'), s = c && c.querySelector(".tl");
	if (!s) return { lanes: 0, red: 0, pause: 0, refused: [], cancelled: [], oversold: [], wide: false, holdFill: "" };
	const texts = q => [...s.querySelectorAll(q)].map(e => e.dataset.text);
	return { lanes: s.querySelectorAll("g.lane").length,
		red: new Set([...s.querySelectorAll("rect.overlap")].map(r => r.closest("g.lane").dataset.process)).size,
		pause: s.querySelectorAll("rect.fault-pause").length,
		refused: texts(".mark.refused"), cancelled: texts(".mark.cancelled"), oversold: texts(".mark.write.oversold"), wide: c.classList.contains("tl-wide"),
		holdFill: getComputedStyle(s.querySelector("rect.hold")).fill };
})(%q)`

// TestUILabTimelineInChromium runs watchdog, fence and dlock × pause from the live page in
// headless Chromium, as a person would (the lab's kind, the three locks, the pause scenario,
// Run), for real: the lab's three API processes, a SIGSTOP of the holder. Each cell's card
// must then draw its lock timeline (internal/timeline's script, served as
// /assets/timeline.js), zoomed on its first overlap by its button: two processes red for
// holding the lock at once, the pause, and for watchdog a write marked as overselling, for
// fence the stale write refused by PostgreSQL and nothing cancelled, for dlock the stale
// write refused or cancelled, and for both nothing oversold; and the page threw no script
// error. With UPDATE_SCREENSHOTS=1 it saves the page, as it is then, to docs/ui-lab.png.
func TestUILabTimelineInChromium(t *testing.T) {
	// Not parallel, like TestUILabRun: the lab's three API processes run real sales.
	dsn, redisAddr, prefix := testenv.APIBackend(t)
	base, u := newTestUI(t, "", map[string]string{"DATABASE_URL": dsn, "REDIS_ADDR": redisAddr})
	u.LabPrefix = prefix
	browser := servers.StartBrowser(t, 4*time.Minute)
	ctx := browser.Ctx
	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`body[data-state="idle"] #run`),
		chromedp.Click(`input[name="kind"][value="lab"]`),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[any](`document.querySelectorAll('input[name="lock"]').forEach(c => { c.checked = ["watchdog", "fence", "dlock"].includes(c.value) })`)(ctx, t)
			return err
		}),
		chromedp.SetValue("#scenario", "pause"),
		chromedp.Click("#run"),
		chromedp.WaitVisible(`body[data-state="running"]`),
		chromedp.WaitVisible(`body[data-state="done"]`),
	)
	if err != nil {
		t.Fatalf("run the lab from the page: %v (script errors: %v)", err, browser.ScriptErrors())
	}
	for _, lock := range []string{"watchdog", "fence", "dlock"} {
		name := lock + " × pause"
		err := chromedp.Do(ctx, chromedp.Click(fmt.Sprintf(`section.item[data-name="%s"] button[data-zoom="focus"]`, name)))
		if err != nil {
			t.Fatalf("%s: zoom on the first overlap: %v", name, err)
		}
		d, err := chromedp.Run(ctx, chromedp.Evaluate[cardTimeline](fmt.Sprintf(readCardTimeline, name)))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", name, d)
		if d.Lanes < 2 || d.Red < 2 || d.Pause != 1 || !d.Wide {
			t.Errorf("%s: %+v; want the lanes, two holders at once, the pause, the card across the row", name, d)
		}
		// The page's Content-Security-Policy refuses inline style: the timeline's comes from
		// /assets/timeline.css, or the lanes are drawn black.
		if d.HoldFill != "rgb(207, 227, 245)" {
			t.Errorf("%s: a hold's fill is %q, want the timeline's style's rgb(207, 227, 245)", name, d.HoldFill)
		}
		switch lock {
		case "watchdog":
			if len(d.Oversold) == 0 || !strings.Contains(d.Oversold[0], "OVERSOLD") {
				t.Errorf("watchdog × pause: no write marked as overselling: %v", d.Oversold)
			}
		case "fence":
			if len(d.Refused) == 0 || len(d.Cancelled) != 0 || len(d.Oversold) != 0 {
				t.Errorf("fence × pause: refused %v, cancelled %v, oversold %v; want the stale write refused by PostgreSQL, nothing cancelled, nothing oversold",
					d.Refused, d.Cancelled, d.Oversold)
			}
		case "dlock":
			if len(d.Refused)+len(d.Cancelled) == 0 || len(d.Oversold) != 0 {
				t.Errorf("dlock × pause: refused %v, cancelled %v, oversold %v; want the stale write refused or cancelled, nothing oversold",
					d.Refused, d.Cancelled, d.Oversold)
			}
		}
	}
	if os.Getenv("UPDATE_SCREENSHOTS") == "1" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "ui-lab.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if e := browser.ScriptErrors(); len(e) > 0 {
		t.Errorf("the page threw: %v", e)
	}
}
