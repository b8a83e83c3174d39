package liveui

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/testenv"
)

// TestUIRefusals: what the page's API refuses, and how. A run request the command line would
// refuse is a 400 with the command line's message; a second run while one goes is a 409; a
// form post (not JSON) is a 415; and a Host that is not loopback (DNS rebinding) is a 403
// (cmd/loadtest's TestUIRefusesNonLoopback: the command refuses to listen off loopback
// without -public). A run stopped from the page
// ends as stopped, with its end event.
func TestUIRefusals(t *testing.T) {
	t.Parallel()
	// Targets that never answer: a strategies run waits for their /readyz, so it is still
	// going when the second one comes.
	base, u := newTestUI(t, "http://127.0.0.1:1", map[string]string{"ADMIN_TOKEN": "ui-test-admin-token"})
	tok := []string{PageTokenHeader, pageToken(t, base)} // the page's: these requests come from it
	for _, c := range []struct {
		body, code, detail string
		status             int
	}{
		{`{"kind":"strategies","strategies":["dlock"],"stock":-1,"buyers":8,"duration_s":1}`, "bad_request", "-stock -1", 400},
		{`{"kind":"strategies","strategies":["magic"],"stock":5,"buyers":8,"duration_s":1}`, "bad_request", `"magic"`, 400},
		{`{"kind":"strategies","strategies":["dlock"],"stock":5,"buyers":8,"duration_s":0}`, "bad_request", "every attack is bounded", 400},
		{`{"kind":"lab","locks":["none"],"scenario":"flood"}`, "bad_request", `"flood"`, 400},
		{`{"kind":"lab","locks":[],"scenario":"crowd"}`, "bad_request", "at least one lock", 400},
		{`{"kind":"poll"}`, "bad_request", "want strategies or lab", 400},
		{`{"kind":"lab","lockz":["none"]}`, "bad_request", "unknown field", 400},
	} {
		var p uiProblemBody
		if got := uiCall(t, "POST", base+"/api/runs", "application/json", c.body, &p, tok...); got != c.status || p.Code != c.code || !strings.Contains(p.Detail, c.detail) {
			t.Errorf("POST %s = %d %+v, want %d %s with %q", c.body, got, p, c.status, c.code, c.detail)
		}
	}
	var p uiProblemBody
	if got := uiCall(t, "POST", base+"/api/runs", "application/x-www-form-urlencoded", "kind=lab", &p, tok...); got != 415 {
		t.Errorf("a form post = %d %+v, want 415", got, p)
	}
	req, _ := http.NewRequest("GET", base+"/api/runs", nil)
	req.Host = "attacker.example:80"
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("GET with Host attacker.example = %v %v, want 403", resp, err)
	}

	ok := `{"kind":"strategies","strategies":["dlock"],"stock":5,"think_ms":0,"buyers":8,"duration_s":1}`
	// A -dir that cannot hold the run (a file stands where a directory must go, which stops
	// root too): 503 with Retry-After, and no run.
	setDir := func(dir string) { u.mu.Lock(); u.Dir = dir; u.mu.Unlock() }
	keep := u.Dir
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	setDir(filepath.Join(blocker, "runs"))
	if got := uiCall(t, "POST", base+"/api/runs", "application/json", ok, &p, tok...); got != 503 || p.Code != "storage_unavailable" {
		t.Errorf("a run that cannot be kept = %d %+v, want 503 storage_unavailable", got, p)
	}
	setDir(keep)
	var first runInfo
	if got := uiCall(t, "POST", base+"/api/runs", "application/json", ok, &first, tok...); got != 202 || first.Status != "running" {
		t.Fatalf("POST a run = %d %+v, want 202 running", got, first)
	}
	if !strings.HasPrefix(first.Command, "loadtest compare -targets http://127.0.0.1:1 -strategies dlock -stock 5") {
		t.Errorf("command = %q", first.Command)
	}
	if got := uiCall(t, "POST", base+"/api/runs", "application/json", ok, &p, tok...); got != 409 || p.Code != "run_in_progress" || !strings.Contains(p.Detail, first.ID) {
		t.Errorf("a second run = %d %+v, want 409 run_in_progress naming %s", got, p, first.ID)
	}
	if got := uiCall(t, "POST", base+"/api/runs/"+first.ID+"/stop", "application/json", "", nil, tok...); got != 202 {
		t.Errorf("stop = %d, want 202", got)
	}
	events := readEvents(t, base+"/api/runs/"+first.ID+"/events")
	if len(events) < 2 || events[0].Type != "run" || events[len(events)-1].Type != "end" {
		t.Fatalf("events %+v: want run ... end", events)
	}
	var end endEvent
	json.Unmarshal(events[len(events)-1].Data, &end)
	if end.Status != "stopped" || end.OK {
		t.Errorf("end = %+v, want stopped", end)
	}
	if got := uiCall(t, "GET", base+"/api/runs/"+first.ID+"/secrets.txt", "", "", &p); got != 404 {
		t.Errorf("a file a run does not have = %d, want 404", got)
	}
	if got := uiCall(t, "GET", base+"/api/runs/20990101-000000-zzzz", "", "", &p); got != 404 || p.Code != "run_not_found" {
		t.Errorf("an unknown run = %d %+v, want 404 run_not_found", got, p)
	}
}

// TestUILabRun starts a lab run from the page's API (one cell: no lock, a crowd) and reads
// its events: the cell begins, samples of orders and stock come, the verdict is the lab's
// (oversold, as expected), the run passes and its files are there. A second server on the
// same directory (loadtest ui restarted) lists the run and replays the same events.
func TestUILabRun(t *testing.T) {
	// Not parallel, like TestLabShortMatrix: its three API processes run a real sale.
	dsn, redisAddr, prefix := testenv.APIBackend(t)
	base, u := newTestUI(t, "", map[string]string{"DATABASE_URL": dsn, "REDIS_ADDR": redisAddr})
	u.LabPrefix = prefix // the test's: its cleanup deletes what the cell leaves in Redis
	body := `{"kind":"lab","locks":["none"],"scenario":"crowd"}`
	var started runInfo
	if got := uiCall(t, "POST", base+"/api/runs", "application/json", body, &started, PageTokenHeader, pageToken(t, base)); got != 202 {
		t.Fatalf("POST a lab run = %d", got)
	}
	if started.Command != "loadtest lab -locks none -scenarios crowd -redis-prefix "+prefix || len(started.Items) != 1 || started.Items[0].Expected != "oversold" {
		t.Errorf("run = %+v", started)
	}
	events := readEvents(t, base+"/api/runs/"+started.ID+"/events")
	kinds := map[string]int{}
	for _, e := range events {
		kinds[e.Type]++
	}
	var v verdictEvent
	var end endEvent
	var last struct {
		Orders       int      `json:"orders"`
		OrdersPerSec *float64 `json:"orders_per_sec"`
		PaceWindowMS *int64   `json:"pace_window_ms"`
	}
	for _, e := range events {
		switch e.Type {
		case "sample":
			json.Unmarshal(e.Data, &last)
		case "verdict":
			json.Unmarshal(e.Data, &v)
		case "end":
			json.Unmarshal(e.Data, &end)
		}
	}
	t.Logf("events %v; verdict %+v; end %+v", kinds, v, end)
	if kinds["item"] != 1 || kinds["sample"] < 2 || kinds["verdict"] != 1 || kinds["end"] != 1 {
		t.Errorf("events %v: want an item, samples, a verdict and the end", kinds)
	}
	// The cell's pace is orders per second over its selling window, > 0 once it sold.
	if last.Orders == 0 || last.OrdersPerSec == nil || *last.OrdersPerSec <= 0 || last.PaceWindowMS == nil || *last.PaceWindowMS <= 0 {
		t.Errorf("the last sample: %d orders, pace %v over %v ms: want a pace over the selling window", last.Orders, last.OrdersPerSec, last.PaceWindowMS)
	}
	if v.Name != "none × crowd" || !v.OK || v.Oversold == 0 || !strings.Contains(v.Label, "(expected oversold)") {
		t.Errorf("verdict %+v: want none × crowd oversold, as expected", v)
	}
	if end.Status != "passed" || end.Files["json"] == "" || end.Files["html"] == "" || end.Files["txt"] == "" {
		t.Errorf("end %+v: want passed, with the JSON, HTML and text reports", end)
	}
	if got := uiCall(t, "GET", base+end.Files["html"], "", "", nil); got != 200 {
		t.Errorf("GET the HTML report = %d", got)
	}

	again, err := New(Config{Dir: u.Dir, Limits: DefaultLimits}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv2 := httptest.NewServer(again.Handler())
	defer srv2.Close()
	var list struct{ Runs []runInfo }
	uiCall(t, "GET", srv2.URL+"/api/runs", "", "", &list)
	if len(list.Runs) != 1 || list.Runs[0].ID != started.ID || list.Runs[0].Status != "passed" {
		t.Fatalf("after a restart, runs = %+v", list.Runs)
	}
	replayed := readEvents(t, srv2.URL+"/api/runs/"+started.ID+"/events")
	if len(replayed) != len(events) {
		t.Fatalf("after a restart, %d events replayed, want %d", len(replayed), len(events))
	}
	for i, e := range replayed {
		if e.Type != events[i].Type || string(e.Data) != string(events[i].Data) {
			t.Fatalf("after a restart, event %d is %s %s, want %s %s", i, e.Type, e.Data, events[i].Type, events[i].Data)
		}
	}
}
