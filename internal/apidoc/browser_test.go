package apidoc_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// traffic records what a page asked of the network and what it said on the console.
type traffic struct {
	mu       sync.Mutex
	requests []string // every URL requested that is not the page's own file
	errors   []string // console errors, exceptions and browser log errors
}

func (tr *traffic) listen(ev any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if !strings.HasPrefix(e.Request.URL, "file://") {
			tr.requests = append(tr.requests, e.Request.URL)
		}
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError {
			tr.errors = append(tr.errors, "console.error")
		}
	case *runtime.EventExceptionThrown:
		tr.errors = append(tr.errors, e.ExceptionDetails.Text)
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError {
			tr.errors = append(tr.errors, string(e.Entry.Source)+": "+e.Entry.Text)
		}
	}
}

func (tr *traffic) take() (requests, errors []string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	requests, errors = tr.requests, tr.errors
	tr.requests, tr.errors = nil, nil
	return requests, errors
}

// TestPageInChromium opens the rendered fixture, and the API's own description when it
// exists, in headless Chromium from a file:// URL with the network off: the DOM holds one
// article per operation and the error codes, following a link in the contents and a code's
// link scrolls to its target, the console shows no error, and nothing was requested. A
// negative control first: a page with an image on the network is seen asking for it, so
// the listener would catch a page that did. `make up` installs Chromium.
func TestPageInChromium(t *testing.T) {
	browser := servers.StartBrowser(t, 2*time.Minute)
	ctx := browser.Ctx
	tr := &traffic{}
	if err := chromedp.Listen(ctx, tr.listen); err != nil {
		t.Fatal(err)
	}
	_, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		MatchedNetworkConditions: []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}},
	})
	if err != nil {
		t.Fatalf("turn the network off: %v", err)
	}
	dir := t.TempDir()

	// The negative control: the listener sees a page's request, also with the network off.
	control := filepath.Join(dir, "control.html")
	if err := os.WriteFile(control, []byte(`<!doctype html><title>c</title><img src="http://127.0.0.1:9/x.png">`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+control), chromedp.WaitReady("img")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	var requests []string
	for len(requests) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		requests, _ = tr.take()
	}
	if len(requests) == 0 || !strings.Contains(requests[0], "127.0.0.1:9/x.png") {
		t.Fatalf("the control page's image request was not seen (%q): the check below would prove nothing", requests)
	}

	for _, path := range []string{"testdata/fixture.yaml", realSpec} {
		t.Run(path, func(t *testing.T) {
			page := filepath.Join(dir, strings.ReplaceAll(filepath.Base(path), ".yaml", ".html"))
			if err := os.WriteFile(page, []byte(render(t, readSpec(t, path))), 0o644); err != nil {
				t.Fatal(err)
			}
			tr.take()
			err := chromedp.Do(ctx, chromedp.Navigate("file://"+page), chromedp.WaitReady(`body[data-operations]`))
			if err != nil {
				t.Fatalf("open the page: %v", err)
			}
			type dom struct {
				Declared  string `json:"declared"`
				Articles  int    `json:"articles"`
				TOCLinks  int    `json:"toc"`
				Codes     int    `json:"codes"`
				FirstOp   string `json:"firstOp"`
				FirstCode string `json:"firstCode"`
				Styled    bool   `json:"styled"`
			}
			got, err := chromedp.Run(ctx, chromedp.Evaluate[dom](`({
				declared: document.body.dataset.operations,
				articles: document.querySelectorAll("article.op").length,
				toc: document.querySelectorAll("nav#toc a[href^='#op-']").length,
				codes: document.querySelectorAll("tr[id^='error-']").length,
				firstOp: document.querySelector("nav#toc a[href^='#op-']").getAttribute("href"),
				firstCode: (document.querySelector(".codes a[href^='#error-']") || {getAttribute: () => ""}).getAttribute("href"),
				styled: getComputedStyle(document.querySelector("span.method")).color === "rgb(255, 255, 255)",
			})`))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", got)
			if got.Articles == 0 || got.Declared != strconv.Itoa(got.Articles) || got.TOCLinks != got.Articles {
				t.Errorf("%s operations declared, %d articles, %d links in the contents: want the same, more than 0", got.Declared, got.Articles, got.TOCLinks)
			}
			if got.Codes == 0 || got.FirstCode == "" {
				t.Errorf("%d error codes, first code link %q: want some", got.Codes, got.FirstCode)
			}
			if !got.Styled {
				t.Error("the inline CSS was not applied")
			}
			// Follow a link in the contents, then a code's link: each target becomes the
			// document's :target and is scrolled to the top of the window (or as near as the
			// page's end allows: then the page is scrolled to its end and the target shows).
			const where = `(() => { const e = document.querySelector(":target"), r = e ? e.getBoundingClientRect() : {top: -1e9};
				return {target: e ? "#" + e.id : "", top: r.top, atEnd: scrollY + innerHeight >= document.documentElement.scrollHeight - 1, height: innerHeight} })()`
			type place struct {
				Target string  `json:"target"`
				Top    float64 `json:"top"`
				AtEnd  bool    `json:"atEnd"`
				Height float64 `json:"height"`
			}
			for _, href := range []string{got.FirstOp, got.FirstCode} {
				if href == "" {
					continue
				}
				sel := `a[href="` + href + `"]`
				if err := chromedp.Do(ctx, chromedp.Click(sel)); err != nil {
					t.Fatalf("click %s: %v", sel, err)
				}
				var p place
				jumped := func() bool {
					return p.Target == href && p.Top >= -1 && (p.Top < 50 || p.AtEnd && p.Top < p.Height-50)
				}
				for range 50 { // a click scrolls at once, but give the page a moment
					if p, err = chromedp.Run(ctx, chromedp.Evaluate[place](where)); err != nil {
						t.Fatal(err)
					}
					if jumped() {
						break
					}
					time.Sleep(20 * time.Millisecond)
				}
				if !jumped() {
					t.Errorf("after clicking %s: %+v, want %s at the top of the window", sel, p, href)
				}
			}
			requests, errors := tr.take()
			if len(requests) > 0 {
				t.Errorf("the page asked the network for %q", requests)
			}
			if len(errors) > 0 {
				t.Errorf("console errors: %q", errors)
			}
			if e := browser.ScriptErrors(); len(e) > 0 {
				t.Errorf("the page threw: %v", e)
			}
		})
	}
}
