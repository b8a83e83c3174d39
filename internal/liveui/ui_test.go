package liveui

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/testenv"
)

// newTestUI serves a loadtest ui of its own (runs kept in a temporary directory) whose
// environment is env, with the default ceilings, and returns its base URL.
func newTestUI(t *testing.T, targets string, env map[string]string) (string, *Server) {
	t.Helper()
	fixed, err := FixedTargets("-targets", targets, nil)
	if err != nil {
		t.Fatal(err)
	}
	return serveTestUI(t, Config{Targets: fixed, Limits: DefaultLimits}, env)
}

// serveTestUI serves a loadtest ui of c (runs kept in a temporary directory unless c.Dir)
// whose environment is env, and returns its base URL.
func serveTestUI(t *testing.T, c Config, env map[string]string) (string, *Server) {
	t.Helper()
	if c.Dir == "" {
		c.Dir = t.TempDir()
	}
	c.Compare, c.Lab = fromEnv(env)
	u, err := New(c, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(u.Handler())
	t.Cleanup(func() { u.Close(); srv.Close() })
	return srv.URL, u
}

// fromEnv is what loadtest ui's command line gives runs to start from when its environment
// is env and no flag of compare or lab is set: their defaults, and the variables they read.
func fromEnv(env map[string]string) (loadgen.Config, loadgen.LabConfig) {
	c := loadgen.DefaultConfig()
	c.ExpectNaive, c.AdminToken = true, env["ADMIN_TOKEN"]
	or := func(v *string, key string) {
		if s := env[key]; s != "" {
			*v = s
		}
	}
	or(&c.DatabaseURL, "DATABASE_URL")
	or(&c.RedisAddr, "REDIS_ADDR")
	or(&c.RedisPrefix, "REDIS_KEY_PREFIX")
	lab := loadgen.LabConfig{DatabaseURL: c.DatabaseURL, RedisAddr: c.RedisAddr, EtcdEndpoints: "http://127.0.0.1:2379"}
	or(&lab.EtcdEndpoints, "ETCD_ENDPOINTS")
	return c, lab
}

// pageToken reads the per-start token from the page base serves, as the page's script does.
func pageToken(t *testing.T, base string) string {
	t.Helper()
	return pageTokenVia(t, http.DefaultClient, base)
}

// pageTokenVia is pageToken with client.
func pageTokenVia(t *testing.T, client *http.Client, base string) string {
	t.Helper()
	resp, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`<meta name="seckill-page-token" content="([^"]+)">`).FindSubmatch(page)
	if resp.StatusCode != 200 || m == nil {
		t.Fatalf("GET %s/ = %d: no page token in the page", base, resp.StatusCode)
	}
	return string(m[1])
}

// uiCall sends a request to the UI, with the headers given as name, value pairs (a "Host"
// pair sets the request's Host), and decodes its JSON answer into out (when not nil).
func uiCall(t *testing.T, method, url, contentType, body string, out any, headers ...string) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("%s %s: decode: %v", method, url, err)
		}
	}
	return resp.StatusCode
}

type uiProblemBody struct{ Code, Detail string }

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

// readEvents reads a run's event stream until the server closes it (the run ended), for at
// most a minute.
func readEvents(t *testing.T, url string) (events []uiEvent) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("events: Content-Type %q", ct)
	}
	var e uiEvent
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			e.Type = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "): // lines of data join with a line break
			if e.Data != nil {
				e.Data = append(e.Data, '\n')
			}
			e.Data = append(e.Data, strings.TrimPrefix(line, "data: ")...)
		case line == "" && e.Type != "":
			if !json.Valid(e.Data) {
				t.Fatalf("event %s: its data is not JSON: %s", e.Type, e.Data)
			}
			events = append(events, e)
			e = uiEvent{}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("events: %v (after %d)", err, len(events))
	}
	return events
}

// TestUILabRun starts a lab run from the page's API (one cell: no lock, a crowd) and reads
// its events: the cell begins, samples of orders and stock come, the verdict is the lab's
// (oversold, as expected), the run passes and its files are there. A second server on the
// same directory (loadtest ui restarted) lists the run and replays the same events.
func TestUILabRun(t *testing.T) {
	// Not parallel, like TestLabShortMatrix: its three API processes run a real sale.
	dsn, redisAddr, prefix := ownBackend(t)
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

// ownBackend skips the test with -short, and otherwise returns a fresh schema of
// DATABASE_URL, REDIS_ADDR and a key prefix whose keys are deleted when the test ends: the
// backend of API processes of the test's own.
func ownBackend(t *testing.T) (dsn, redisAddr, prefix string) {
	t.Helper()
	testenv.SkipShort(t, "three API processes")
	_, prefix = testenv.Redis(t)
	return testenv.Schema(t), testenv.RedisAddr(t), prefix
}
