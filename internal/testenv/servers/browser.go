package servers

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Browser is a headless Chromium of the test's own, driven over the DevTools protocol
// (github.com/chromedp/chromedp): the one way the tests open a page, as a person would.
// Ctx is the context to pass to chromedp's actions; it ends when the browser's time is up or
// the test ends. Browser records every script exception the pages throw (ScriptErrors), so
// that a test can require a page that ran cleanly.
type Browser struct {
	Ctx context.Context

	mu     sync.Mutex
	thrown []string
}

// StartBrowser starts Chromium (Debian's chromium package, which `make up` installs; the
// test fails without it) headless, without sandbox, GPU, first-run pages, component updates,
// sync or background networking, on a fresh profile in a temporary directory, with a
// 1400x1000 window. Every action on Ctx must be done within timeout. The browser is closed
// when the test ends.
func StartBrowser(t T, timeout time.Duration) *Browser {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed: `make up` installs it (Debian's chromium package)")
	}
	profile, err := os.MkdirTemp("", "chromium-profile-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile), chromedp.WindowSize(1400, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelBrowser()
		cancelAlloc() // waits for the process to exit
		os.RemoveAll(profile)
	})
	b := &Browser{Ctx: ctx}
	// The first action starts the browser; Listen is one.
	err = chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			b.record(e.ExceptionDetails)
		}
	})
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

func (b *Browser) record(d *runtime.ExceptionDetails) {
	msg := fmt.Sprintf("%s:%d: %s", d.URL, d.LineNumber+1, d.Text)
	if d.Exception != nil {
		msg += " " + d.Exception.Description
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.thrown = append(b.thrown, msg)
}

// ScriptErrors returns the uncaught script exceptions the browser's pages threw so far, as
// "url:line: text description".
func (b *Browser) ScriptErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.thrown)
}
