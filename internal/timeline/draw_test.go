package timeline_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/testenv/servers"
	"github.com/seckill/seckill/internal/timeline"
)

// Fences as dlock mints them, microseconds of Redis's clock: the second is 21 ms after the
// first and crosses a million, so that their last six digits (999000, then 020000) shrink.
const (
	f1 = int64(1_764_000_000_999_000)
	f2 = f1 + 21_000
	f3 = f1 + 1_701_000
)

// refusedAndCancelled is a pause under a fenced lock with both endings: process 1, paused
// past its lease, wakes and sends its write, which PostgreSQL refuses for its stale fence;
// process 2 holds meanwhile and sells; process 3 then holds, and its work is cancelled by its
// lock's loss before its write is sent.
func refusedAndCancelled() []history.LockOp {
	r := &rec{t0: time.Unix(1_700_000_000, 0)}
	r.op("1", history.Grant, "a", f1, 0, 1, history.OK)
	r.read("1", "a", f1, 2, 17)
	r.op("1", history.Fault, "", 0, 10, 1510, history.OK).Fault = history.FaultPause
	r.op("2", history.Grant, "b", f2, 600, 601, history.OK)
	r.read("2", "b", f2, 602, 17)
	r.write("2", "b", f2, 1000, 16, 17)
	r.op("2", history.Release, "b", f2, 1100, 1101, history.OK)
	w := r.op("1", history.Write, "a", f1, 1612, 1614, history.Fail)
	v := 16
	w.Value, w.Reason = &v, history.ReasonFence
	r.op("1", history.Release, "a", f1, 1615, 1616, history.Unknown).Reason = "dlock: not held"
	r.op("3", history.Grant, "c", f3, 1700, 1701, history.OK)
	r.read("3", "c", f3, 1702, 16)
	c := r.op("3", history.Write, "c", f3, 2300, 2300, history.Fail)
	v3 := 15
	c.Value, c.Reason = &v3, history.ReasonLost
	r.op("3", history.Loss, "c", f3, 2300, 2300, history.OK)
	return r.ops
}

// TestRefusedApartFromCancelled: Build tells a write PostgreSQL refused for a stale fence
// (Refused) from one its holder cancelled, told its lock was lost (Cancelled), counts each,
// and takes the first hold's fence as the base the page labels fences from.
func TestRefusedApartFromCancelled(t *testing.T) {
	tl := timeline.Build("k", refusedAndCancelled())
	if tl.Refused != 1 || tl.Cancelled != 1 || tl.Oversold != 0 || len(tl.Overlaps) != 1 {
		t.Fatalf("refused %d, cancelled %d, oversold %d, overlaps %+v; want 1, 1, 0 and one overlap",
			tl.Refused, tl.Cancelled, tl.Oversold, tl.Overlaps)
	}
	if m := lane(t, tl, "1").Marks[1]; !m.Refused || m.Cancelled {
		t.Errorf("process 1's write %+v: want refused by the fence, not cancelled", m)
	}
	if m := lane(t, tl, "3").Marks[1]; m.Refused || !m.Cancelled {
		t.Errorf("process 3's write %+v: want cancelled, not refused", m)
	}
	if tl.FenceBase != f1 {
		t.Errorf("fence base %d, want the first hold's, %d", tl.FenceBase, f1)
	}
}

// drawnTimeline is what the page shows of a timeline: each hold's label and its fence, the
// marks drawn as refused and as cancelled (their text), and the legend.
type drawnTimeline struct {
	Holds     []struct{ Fence, Label string }
	Refused   []string
	Cancelled []string
	Legend    string
	Facts     string
}

const readDrawn = `(() => { const s = document.getElementById("tl");
	return { holds: [...s.querySelectorAll("text.fence")].map(t => ({ fence: t.dataset.fence, label: t.textContent })),
		refused: [...s.querySelectorAll(".mark.refused")].map(m => m.dataset.text),
		cancelled: [...s.querySelectorAll(".mark.cancelled")].map(m => m.dataset.text),
		legend: s.querySelector(".tl-legend").textContent, facts: s.querySelector(".tl-facts").textContent };
})()`

// TestDrawnInChromium draws refusedAndCancelled with the page's script (JS) in headless
// Chromium and reads the DOM: the write PostgreSQL refused and the write its holder cancelled
// are drawn as different marks, each with its own words and legend entry; and the fence
// labels read in the order of the fences, each as F₀ plus its distance from the first, so
// that the second fence, whose last six digits are smaller, reads larger.
func TestDrawnInChromium(t *testing.T) {
	tl := timeline.Build("k", refusedAndCancelled())
	data, err := json.Marshal(tl)
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "tl.html")
	html := fmt.Sprintf(`<!doctype html><meta charset="utf-8"><style>%s</style><body><div id="tl"></div><script>%s</script>
<script>SeckillTimeline.draw(document.getElementById("tl"), %s, "test"); document.body.dataset.drawn = "1";</script>`, timeline.CSS, timeline.JS, data)
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	b := servers.StartBrowser(t, time.Minute)
	if err := chromedp.Do(b.Ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(`body[data-drawn]`)); err != nil {
		t.Fatalf("open the page: %v (script errors: %v)", err, b.ScriptErrors())
	}
	d, err := chromedp.Run(b.Ctx, chromedp.Evaluate[drawnTimeline](readDrawn))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("drawn: %+v", d)
	if len(d.Refused) != 1 || !strings.Contains(d.Refused[0], "REFUSED by PostgreSQL: stale fence") {
		t.Errorf("marks drawn as refused: %q; want process 1's write, refused by PostgreSQL", d.Refused)
	}
	if len(d.Cancelled) != 1 || !strings.Contains(d.Cancelled[0], "CANCELLED by its holder") || !strings.Contains(d.Cancelled[0], "lock lost") {
		t.Errorf("marks drawn as cancelled: %q; want process 3's write, cancelled by the lock's loss", d.Cancelled)
	}
	if !strings.Contains(d.Legend, "✕ refused by PostgreSQL") || !strings.Contains(d.Legend, "⊘ cancelled by its holder") {
		t.Errorf("legend %q: want an entry for each", d.Legend)
	}
	if !strings.Contains(d.Facts, "F₀ = "+strconv.FormatInt(f1, 10)) {
		t.Errorf("header %q: want the first fence, F₀, in full", d.Facts)
	}
	if len(d.Holds) != 3 {
		t.Fatalf("hold labels %+v, want 3", d.Holds)
	}
	for _, h := range d.Holds {
		f, err := strconv.ParseInt(h.Fence, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := fromLabel(h.Label); !ok || got != f-f1 {
			t.Errorf("the hold of fence %d is labelled %q: want F₀+%d", f, h.Label, f-f1)
		}
	}
	if e := b.ScriptErrors(); len(e) > 0 {
		t.Errorf("the page threw: %v", e)
	}
}

// fromLabel reads a fence label, "fence F₀", "fence F₀+21,000" or "fence F₀−5", as its
// distance from F₀.
func fromLabel(label string) (int64, bool) {
	rest, ok := strings.CutPrefix(label, "fence F₀")
	if !ok {
		return 0, false
	}
	if rest == "" {
		return 0, true
	}
	sign := int64(1)
	if r, neg := strings.CutPrefix(rest, "−"); neg {
		sign, rest = -1, r
	} else if rest, ok = strings.CutPrefix(rest, "+"); !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.ReplaceAll(rest, ",", ""), 10, 64)
	return sign * n, err == nil
}
