package apidoc_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestReservationPictureInChromium opens the picture of a reservation's states that
// docs/strategies.md and docs/api.md show, docs/reservation-states.svg, in headless Chromium
// from a file:// URL: it renders as an SVG document of its declared size with a label for
// each of the four states, and requests nothing. A negative control first: the same picture
// with a broken tag is seen not to render.
func TestReservationPictureInChromium(t *testing.T) {
	browser := servers.StartBrowser(t, time.Minute)
	ctx := browser.Ctx
	tr := &traffic{}
	if err := chromedp.Listen(ctx, tr.listen); err != nil {
		t.Fatal(err)
	}
	picture, err := filepath.Abs("../../docs/reservation-states.svg")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(picture)
	if err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(t.TempDir(), "broken.svg")
	if err := os.WriteFile(broken, append(src[:len(src)-10:len(src)-10], []byte("<g>")...), 0o644); err != nil {
		t.Fatal(err)
	}
	type drawn struct {
		Root   string   `json:"root"`
		Width  float64  `json:"width"`
		Height float64  `json:"height"`
		States []string `json:"states"`
	}
	look := func(path string) drawn {
		t.Helper()
		tr.take()
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path)); err != nil {
			t.Fatal(err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[drawn](`(() => {
			const r = document.documentElement, box = r.getBoundingClientRect ? r.getBoundingClientRect() : {width: 0, height: 0};
			return {root: r.localName, width: box.width, height: box.height,
				states: [...document.querySelectorAll("text[id^='state-']")].filter(e => e.getBBox().width > 0).map(e => e.textContent)};
		})()`))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := look(broken); got.Root == "svg" && len(got.States) == 4 {
		t.Fatalf("the broken control rendered (%+v): the check below would prove nothing", got)
	}
	got := look(picture)
	t.Logf("%+v", got)
	if got.Root != "svg" || got.Width != 760 || got.Height != 330 {
		t.Errorf("rendered %+v, want an svg of 760x330", got)
	}
	if want := []string{"pending", "paid", "cancelled", "expired"}; len(got.States) != len(want) {
		t.Errorf("states drawn %q, want %q", got.States, want)
	}
	if requests, errs := tr.take(); len(requests) > 0 || len(errs) > 0 {
		t.Errorf("the picture requested %q, errors %q: want nothing", requests, errs)
	}
}
