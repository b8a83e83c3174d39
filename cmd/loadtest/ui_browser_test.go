package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// pageItem is what the test reads of one item of the page, from the DOM.
type pageItem struct {
	Name     string `json:"name"`
	Points   int    `json:"points"`
	OK       string `json:"ok"`
	Label    string `json:"label"`
	Oversold bool   `json:"oversold"`
	Figures  string `json:"figures"`
}

// readItems is the page's script that reads every item's chart, verdict and figures.
const readItems = `[...document.querySelectorAll("section.item")].map(s => ({
	name: s.dataset.name,
	points: Number(s.querySelector("svg.chart").dataset.points || 0),
	ok: s.querySelector(".verdict").dataset.ok || "",
	label: s.querySelector(".verdict").textContent,
	oversold: s.classList.contains("oversold"),
	figures: s.querySelector(".figures").textContent,
}))`

// TestUIInChromium drives the live page in headless Chromium, as a person would: open it,
// pick naive and dlock, a small stock and a short run, press Run, and wait for the end. Then,
// from the DOM: each strategy's chart received samples, naive's orders ran past the stock
// (the oversell it exists to show, the CLI's "OVERSOLD (expected)"), dlock's verdict is PASS,
// dlock's card shows the lock figures read from the APIs' /metrics, the overall verdict
// passed, and the page threw no script error. The targets are the two fixed at start, picked
// by checkboxes (no field takes a URL); the run's POST carried the page's per-start token,
// and a POST from the page without it is refused. Reopening the run from the past runs draws
// its charts again. With SECKILL_UI_SCREENSHOT=file.png, the finished page
// is saved there (docs/ui.png comes from it).
func TestUIInChromium(t *testing.T) {
	dsn, redisAddr, prefix := ownBackend(t)
	t.Parallel()
	const token = "ui-browser-test-admin-token"
	env := map[string]string{"DATABASE_URL": dsn, "REDIS_ADDR": redisAddr, "REDIS_KEY_PREFIX": prefix, "ADMIN_TOKEN": token}
	var targets []string
	for _, a := range servers.StartAPIs(t, 2, map[string]string{
		"DATABASE_URL": dsn, "REDIS_ADDR": redisAddr, "REDIS_KEY_PREFIX": prefix, "ADMIN_TOKEN": token, "LOG_LEVEL": "warn",
		"DB_MAX_CONNS": "5", // a good neighbour: the other tests run beside it
	}) {
		targets = append(targets, a.Base)
	}
	base, _ := newTestUI(t, strings.Join(targets, ","), env)

	browser := servers.StartBrowser(t, 3*time.Minute)
	ctx, jsErrors := browser.Ctx, browser.ScriptErrors

	err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`body[data-state="idle"] #run`),
	)
	if err != nil {
		t.Fatalf("open the page: %v (script errors: %v)", err, jsErrors())
	}
	picks, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#run-form input[name="target"]:checked, #run-form input[type="text"], #run-form input[type="url"]')].map(i => i.type + " " + i.value)`))
	if err != nil || strings.Join(picks, ",") != "checkbox "+strings.TrimPrefix(targets[0], "http://")+",checkbox "+strings.TrimPrefix(targets[1], "http://") {
		t.Errorf("the form's targets: %q %v, want the two fixed at start, checked, and no field for a URL", picks, err)
	}
	err = chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[any](`document.querySelectorAll('input[name="strategy"]').forEach(c => { c.checked = ["naive", "dlock"].includes(c.value) })`)(ctx, t)
			return err
		}),
		chromedp.SetValue("#stock", "30"),
		chromedp.SetValue("#think-ms", "5"),
		chromedp.SetValue("#buyers", "32"),
		chromedp.SetValue("#duration", "4"),
		chromedp.Click("#run"),
		chromedp.WaitVisible(`body[data-state="running"]`),
		chromedp.WaitVisible(`body[data-state="done"]`),
	)
	if err != nil {
		t.Fatalf("drive the page: %v (script errors: %v)", err, jsErrors())
	}
	items, err := chromedp.Run(ctx, chromedp.Evaluate[[]pageItem](readItems))
	if err != nil {
		t.Fatal(err)
	}
	overall, _ := chromedp.Run(ctx, chromedp.Text("#verdict"))
	overallOK, _ := chromedp.Run(ctx, chromedp.AttributeValue("#verdict", "data-ok"))
	command, _ := chromedp.Run(ctx, chromedp.Text("#command"))
	t.Logf("verdict %q; command %q; items %+v", overall, command, items)
	if len(items) != 2 {
		t.Fatalf("%d items on the page, want naive and dlock", len(items))
	}
	for _, it := range items {
		if it.Points < 2 {
			t.Errorf("%s: the chart drew %d samples, want some", it.Name, it.Points)
		}
		if !strings.Contains(it.Figures, "orders/s") || !strings.Contains(it.Figures, "ms") {
			t.Errorf("%s: figures without their units: %q", it.Name, it.Figures)
		}
		switch it.Name {
		case "naive":
			if it.OK != "true" || !strings.Contains(it.Label, "OVERSOLD") || !it.Oversold {
				t.Errorf("naive: verdict %s %q, oversold mark %v: want the expected oversell", it.OK, it.Label, it.Oversold)
			}
		case "dlock":
			if it.OK != "true" || !strings.Contains(it.Label, "PASS") || it.Oversold {
				t.Errorf("dlock: verdict %s %q, oversold mark %v: want PASS", it.OK, it.Label, it.Oversold)
			}
			// The last sample is taken after the attack, with the APIs' /metrics read again.
			if !strings.Contains(it.Figures, "lock wait") || !strings.Contains(it.Figures, "batch") {
				t.Errorf("dlock: no lock figures from the APIs' /metrics: %q", it.Figures)
			}
		}
	}
	if overallOK.Value != "true" || !strings.Contains(command, "loadtest compare") {
		t.Errorf("overall verdict %s %q, command %q", overallOK.Value, overall, command)
	}
	// The run above went with the page's token; the page's own POST without it does not.
	refused, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch("/api/runs", {method: "POST", headers: {"Content-Type": "application/json"},
		body: JSON.stringify({kind: "lab", locks: ["none"], scenario: "crowd"})}).then(r => r.json()).then(p => p.status + " " + p.code)`, chromedp.EvalAwaitPromise))
	if err != nil || refused != "403 bad_page_token" {
		t.Errorf("a POST from the page without its token = %q %v, want 403 bad_page_token", refused, err)
	}
	if path := os.Getenv("SECKILL_UI_SCREENSHOT"); path != "" {
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Reopen the run from the list of past runs: its charts are drawn again from its events.
	err = chromedp.Do(ctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(`#runs tr[data-id] button`),
		chromedp.Click(`#runs tr[data-id] button`),
		chromedp.WaitVisible(`body[data-state="done"] section.item .verdict[data-ok]`),
	)
	if err != nil {
		t.Fatalf("reopen the run: %v (script errors: %v)", err, jsErrors())
	}
	reopened, err := chromedp.Run(ctx, chromedp.Evaluate[[]pageItem](readItems))
	if err != nil {
		t.Fatal(err)
	}
	if len(reopened) != 2 || reopened[0].Points != items[0].Points {
		got, _ := json.Marshal(reopened)
		t.Errorf("reopened: %s, want the same charts as live", got)
	}
	if e := jsErrors(); len(e) > 0 {
		t.Errorf("the page threw: %v", e)
	}
}
