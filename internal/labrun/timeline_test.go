package labrun_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/labrun"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// drawn is what the test reads of one cell's timeline in the page, after zooming on its first
// overlap: the lanes, the processes drawn red (two holders at once), the marks of reads and
// writes PostgreSQL refused, of those their holder cancelled, and of writes that oversold,
// with their text, and the labels of the holds' fences.
type drawn struct {
	Lanes     int      `json:"lanes"`
	Red       []string `json:"red"`
	Refused   []string `json:"refused"`
	Cancelled []string `json:"cancelled"`
	Oversold  []string `json:"oversold"`
	Pause     []string `json:"pause"`
	Fences    []string `json:"fences"`
}

const readTimeline = `(sel => { const s = document.querySelector(sel);
	const texts = q => [...s.querySelectorAll(q)].map(e => e.closest("g.lane").dataset.process + ": " + e.dataset.text);
	return { lanes: s.querySelectorAll("g.lane").length,
		red: [...new Set([...s.querySelectorAll("rect.overlap")].map(r => r.closest("g.lane").dataset.process))],
		refused: texts(".mark.refused"), cancelled: texts(".mark.cancelled"), oversold: texts(".mark.write.oversold"),
		pause: [...s.querySelectorAll("rect.fault-pause")].map(r => r.closest("g.lane").dataset.process),
		fences: [...s.querySelectorAll("text.fence")].map(e => e.textContent) };
})(%q)`

// TestTimelineInChromium runs watchdog, fence and dlock × pause for real (three API processes,
// a SIGSTOP of the lock's holder), writes the report and opens it in headless Chromium. Each
// cell's timeline, zoomed on its first overlap with its own button, must show two lanes
// holding the lock at once (red), the pause in the paused holder's lane, and: for watchdog
// (no fence, the negative control), a write of that holder marked as overselling, the units
// the timeline counts being the audit's; for fence, that holder's write refused by PostgreSQL
// for its stale fence, nothing cancelled and nothing oversold; for dlock, its stale operation
// refused by the fence or cancelled by the lock's loss, and nothing oversold; fences labelled
// from the cell's first (F₀). With UPDATE_SCREENSHOTS=1 it saves the three timelines to
// docs/timeline-<lock>-pause.png.
func TestTimelineInChromium(t *testing.T) {
	testenv.SkipShort(t, "three API processes and a SIGSTOP")
	dsn := testenv.Schema(t)
	rdb, prefix := testenv.Redis(t)
	gdb, err := db.Open(dsn, db.PoolOptions{MaxOpen: 4})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := gdb.DB()
	t.Cleanup(func() { sqlDB.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cells := []labrun.Pair{{Lock: "watchdog", Scenario: "pause"}, {Lock: "fence", Scenario: "pause"}, {Lock: "dlock", Scenario: "pause"}}
	keep := &keeper{t: t, dir: t.TempDir(), update: os.Getenv("UPDATE_SCREENSHOTS") == "1"}
	res, err := labrun.Run(ctx, labrun.Config{Cells: cells, APIBin: servers.BuildAPI(t), DatabaseURL: dsn, RedisAddr: testenv.RedisAddr(t),
		Prefix: prefix, DB: sqlDB, Redis: rdb, Logf: t.Logf, HistoryDir: keep.dir, Watch: keep})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Cells {
		checkTimeline(t, c)
	}

	page := filepath.Join(t.TempDir(), "lab.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := labrun.WriteReport(f, res); err != nil {
		t.Fatal(err)
	}
	f.Close()
	browser := servers.StartBrowser(t, 2*time.Minute)
	if err := chromedp.Do(browser.Ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(`body[data-rendered]`)); err != nil {
		t.Fatalf("open the report: %v (script errors: %v)", err, browser.ScriptErrors())
	}
	for _, c := range res.Cells {
		sel := fmt.Sprintf(`section.timeline[data-lock="%s"][data-scenario="pause"]`, c.Lock)
		err := chromedp.Do(browser.Ctx, chromedp.Click(sel+` button[data-zoom="focus"]`))
		if err != nil {
			t.Fatalf("%s × pause: zoom on the first overlap: %v", c.Lock, err)
		}
		d, err := chromedp.Run(browser.Ctx, chromedp.Evaluate[drawn](fmt.Sprintf(readTimeline, sel)))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s × pause, zoomed on the first overlap: %+v", c.Lock, d)
		if d.Lanes < 2 || len(d.Red) < 2 || len(d.Pause) != 1 {
			t.Errorf("%s × pause: %d lanes, red in %v, the pause in %v: want two holders at once and the pause", c.Lock, d.Lanes, d.Red, d.Pause)
		}
		switch c.Lock {
		case "watchdog":
			if !anyOf(d.Oversold, d.Pause, "OVERSOLD") {
				t.Errorf("watchdog × pause: no write of the paused process marked as overselling: %v", d.Oversold)
			}
		case "fence":
			if !anyOf(d.Refused, d.Pause, "write of") || len(d.Cancelled) != 0 || len(d.Oversold) != 0 {
				t.Errorf("fence × pause: refused %v, cancelled %v, oversold %v: want the paused process's write refused by PostgreSQL, nothing cancelled, nothing oversold",
					d.Refused, d.Cancelled, d.Oversold)
			}
		case "dlock":
			if !anyOf(append(d.Refused, d.Cancelled...), d.Pause, "") || len(d.Oversold) != 0 {
				t.Errorf("dlock × pause: refused %v, cancelled %v, oversold %v: want the paused process's stale operation refused or cancelled, nothing oversold",
					d.Refused, d.Cancelled, d.Oversold)
			}
		}
		if c.Lock != "watchdog" && (len(d.Fences) == 0 || !allPrefixed(d.Fences, "fence F₀")) {
			t.Errorf("%s × pause: fence labels %q; want each counted from the cell's first fence, F₀", c.Lock, d.Fences)
		}
		if os.Getenv("UPDATE_SCREENSHOTS") == "1" {
			png, err := chromedp.Run(browser.Ctx, chromedp.Screenshot(sel))
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Join("..", "..", "docs", "timeline-"+c.Lock+"-pause.png")
			if err := os.WriteFile(name, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("wrote %s", name)
		}
	}
	if e := browser.ScriptErrors(); len(e) > 0 {
		t.Errorf("the page threw: %v", e)
	}
}

// keeper is the run's Watcher: with update, it copies each cell's lock history, as the
// processes and the runner recorded it, to internal/timeline/testdata/<lock>-pause.jsonl, which
// the lane builder's tests read (the history file is removed when the run ends).
type keeper struct {
	t      *testing.T
	dir    string
	update bool
}

func (k *keeper) CellBegan(labrun.Pair, int, string) {}
func (k *keeper) Sampled(labrun.Pair, labrun.Point)  {}
func (k *keeper) CellDone(c labrun.Cell) {
	if !k.update || c.Timeline == nil {
		return
	}
	ops, err := history.ReadLockOps(filepath.Join(k.dir, "locks.jsonl"))
	if err != nil {
		k.t.Error(err)
		return
	}
	f, err := os.Create(filepath.Join("..", "timeline", "testdata", c.Lock+"-"+c.Scenario+".jsonl"))
	if err == nil {
		err = errors.Join(history.WriteLines(f, history.OfKey(ops, c.Timeline.Key)), f.Close())
	}
	if err != nil {
		k.t.Error(err)
	}
}

// allPrefixed reports whether every one of texts starts with prefix.
func allPrefixed(texts []string, prefix string) bool {
	for _, s := range texts {
		if !strings.HasPrefix(s, prefix) {
			return false
		}
	}
	return true
}

// anyOf reports whether a mark text of one of the processes contains word.
func anyOf(marks, processes []string, word string) bool {
	for _, m := range marks {
		for _, p := range processes {
			if strings.HasPrefix(m, p+": ") && strings.Contains(m, word) {
				return true
			}
		}
	}
	return false
}

// checkTimeline checks a pause cell's timeline as Go built it: two holders at once; the units
// its writes oversold are the audit's (for watchdog, some); for fence, a write of the paused
// process refused by the fence and nothing cancelled; for dlock, something refused or
// cancelled.
func checkTimeline(t *testing.T, c labrun.Cell) {
	t.Helper()
	tl := c.Timeline
	if tl == nil || c.Error != "" || !c.OK() {
		t.Fatalf("%s × %s: %s, timeline %v; want as expected, with a timeline", c.Lock, c.Scenario, c, tl != nil)
	}
	paused := ""
	for _, l := range tl.Lanes {
		for _, f := range l.Faults {
			if f.Kind == history.FaultPause {
				paused = l.Process
			}
		}
	}
	t.Logf("%s × pause: %s; timeline: %d lanes, %d overlaps, oversold %d, refused %d, cancelled %d, paused %q, focus %+v",
		c.Lock, c, len(tl.Lanes), len(tl.Overlaps), tl.Oversold, tl.Refused, tl.Cancelled, paused, tl.Focus)
	if paused == "" || len(tl.Overlaps) == 0 || tl.Focus == nil {
		t.Errorf("%s × pause: no pause recorded, or no overlap", c.Lock)
	}
	if got, want := tl.Oversold, c.Oversold; got != want {
		t.Errorf("%s × pause: the timeline's writes oversold %d, the audit %d", c.Lock, got, want)
	}
	switch c.Lock {
	case "watchdog":
		if tl.Oversold <= 0 {
			t.Errorf("watchdog × pause: the timeline's writes oversold %d, want some", tl.Oversold)
		}
	case "fence":
		refusedWrite := false
		for _, l := range tl.Lanes {
			for _, m := range l.Marks {
				refusedWrite = refusedWrite || l.Process == paused && m.Kind == history.Write && m.Refused && m.Reason == history.ReasonFence
			}
		}
		if !refusedWrite || tl.Cancelled != 0 {
			t.Errorf("fence × pause: a write of the paused process refused by the fence: %v; cancelled %d (want 0)", refusedWrite, tl.Cancelled)
		}
	case "dlock":
		if tl.Refused+tl.Cancelled == 0 {
			t.Errorf("dlock × pause: nothing refused or cancelled")
		}
	}
}
