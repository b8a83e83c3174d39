package liveui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// cardTimeline is what the test reads of a lab cell's lock timeline under its card.
type cardTimeline struct {
	Lanes    int      `json:"lanes"`
	Red      int      `json:"red"`
	Pause    int      `json:"pause"`
	Refused  []string `json:"refused"`
	Oversold []string `json:"oversold"`
	Wide     bool     `json:"wide"`
}

const readCardTimeline = `(name => { const c = document.querySelector('section.item[data-name="' + name + '"]'), s = c && c.querySelector(".tl");
	if (!s) return { lanes: 0, red: 0, pause: 0, refused: [], oversold: [], wide: false };
	const texts = q => [...s.querySelectorAll(q)].map(e => e.dataset.text);
	return { lanes: s.querySelectorAll("g.lane").length,
		red: new Set([...s.querySelectorAll("rect.overlap")].map(r => r.closest("g.lane").dataset.process)).size,
		pause: s.querySelectorAll("rect.fault-pause").length,
		refused: texts(".mark.refused"), oversold: texts(".mark.write.oversold"), wide: c.classList.contains("tl-wide") };
})(%q)`

// TestUILabTimelineInChromium runs watchdog × pause and dlock × pause from the live page in
// headless Chromium, as a person would (the lab's kind, the two locks, the pause scenario,
// Run), for real: the lab's three API processes, a SIGSTOP of the holder. Each cell's card
// must then draw its lock timeline (internal/timeline's script, served as
// /assets/timeline.js), zoomed on its first overlap by its button: two processes red for
// holding the lock at once, the pause, and for watchdog a write marked as overselling, for
// dlock the stale write refused and nothing oversold; and the page threw no script error.
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
			_, err := chromedp.Evaluate[any](`document.querySelectorAll('input[name="lock"]').forEach(c => { c.checked = ["watchdog", "dlock"].includes(c.value) })`)(ctx, t)
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
	for _, lock := range []string{"watchdog", "dlock"} {
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
		switch lock {
		case "watchdog":
			if len(d.Oversold) == 0 || !strings.Contains(d.Oversold[0], "OVERSOLD") {
				t.Errorf("watchdog × pause: no write marked as overselling: %v", d.Oversold)
			}
		case "dlock":
			if len(d.Refused) == 0 || len(d.Oversold) != 0 {
				t.Errorf("dlock × pause: refused %v, oversold %v; want the stale write refused, nothing oversold", d.Refused, d.Oversold)
			}
		}
	}
	if e := browser.ScriptErrors(); len(e) > 0 {
		t.Errorf("the page threw: %v", e)
	}
}
