package liveui

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestUIOnlyThePageChangesThings: a request that changes something (start or stop a run) is
// refused unless it carries the page's per-start token and, when it says where it comes
// from, comes from the page's own origin; and the server answers only its own loopback
// address. On the code before the token, every POST below reached the handler.
func TestUIOnlyThePageChangesThings(t *testing.T) {
	t.Parallel()
	base, u := newTestUI(t, "http://127.0.0.1:1", map[string]string{"ADMIN_TOKEN": "ui-test-admin-token"})
	other, _ := newTestUI(t, "http://127.0.0.1:1", nil) // another start: another token
	tok, otherTok := pageToken(t, base), pageToken(t, other)
	if tok == otherTok || len(tok) < 20 {
		t.Fatalf("page tokens %q and %q: want a long random one per start", tok, otherTok)
	}
	// Refused by compare's own checks: a 400 bad_request means the guard let it through.
	body := `{"kind":"strategies","strategies":["dlock"],"stock":-1,"buyers":8,"duration_s":1}`
	port := base[strings.LastIndex(base, ":")+1:]
	for _, c := range []struct {
		name    string
		headers []string
		status  int
		code    string
	}{
		{"no token", nil, 403, "bad_page_token"},
		{"a wrong token", []string{PageTokenHeader, wrongToken(tok)}, 403, "bad_page_token"},
		{"another start's token", []string{PageTokenHeader, otherTok}, 403, "bad_page_token"},
		{"another site", []string{PageTokenHeader, tok, "Origin", "http://attacker.example"}, 403, "bad_origin"},
		{"another port", []string{PageTokenHeader, tok, "Origin", "http://127.0.0.1:1" + port}, 403, "bad_origin"},
		{"a sandboxed page", []string{PageTokenHeader, tok, "Origin", "null"}, 403, "bad_origin"},
		{"another site without its token", []string{"Origin", "http://attacker.example"}, 403, "bad_origin"},
		{"the page", []string{PageTokenHeader, tok, "Origin", base}, 400, "bad_request"},
		{"the page as localhost", []string{PageTokenHeader, tok, "Origin", "http://localhost:" + port, "Host", "localhost:" + port}, 400, "bad_request"},
		{"no Origin, the token", []string{PageTokenHeader, tok}, 400, "bad_request"},
	} {
		var p uiProblemBody
		if got := uiCall(t, "POST", base+"/api/runs", "application/json", body, &p, c.headers...); got != c.status || p.Code != c.code {
			t.Errorf("POST a run from %s = %d %+v, want %d %s", c.name, got, p, c.status, c.code)
		}
	}
	var p uiProblemBody
	if got := uiCall(t, "POST", base+"/api/runs/20990101-000000-zzzz/stop", "application/json", "", &p); got != 403 || p.Code != "bad_page_token" {
		t.Errorf("POST stop without the token = %d %+v, want 403 bad_page_token", got, p)
	}
	// Host: a loopback name, with the port the server listens on (a rebinding page's Host is
	// its own name).
	for host, want := range map[string]int{"127.0.0.1:" + port: 200, "localhost:" + port: 200, "[::1]:" + port: 200,
		"attacker.example:" + port: 403, "localhost:1" + port: 403, "localhost": 403} {
		if got := uiCall(t, "GET", base+"/api/runs", "application/json", "", nil, "Host", host); got != want {
			t.Errorf("GET with Host %s = %d, want %d", host, got, want)
		}
	}
	if runs := u.runsList(); len(runs) != 0 {
		t.Errorf("runs %v were started, want none", runs)
	}
}

// recorder is an HTTP server that records every request it gets and answers 200 {}: a URL a
// run must never reach.
type recorder struct {
	mu       sync.Mutex
	requests []string // method, path and Authorization header of each
}

func newRecorder(t *testing.T) (*recorder, string) {
	rec := &recorder{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.requests = append(rec.requests, fmt.Sprintf("%s %s Authorization=%q", r.Method, r.URL.Path, r.Header.Get("Authorization")))
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, "{}")
	}))
	t.Cleanup(srv.Close)
	return rec, srv.URL
}

func (rec *recorder) got() []string {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]string(nil), rec.requests...)
}

// TestUITargetsFixedAtStart: a run picks its targets by name or index among those loadtest
// ui was started with; a body naming a URL is refused (400 target_url_refused), one naming
// a target that is not there is refused (400 unknown_target), and nothing, the admin token
// least of all, is sent to the URL it named. (The command line's targets that cannot be fixed:
// cmd/loadtest's TestUIRefusesBadTargets.) On the code before, the first body started a
// run on the URL it named, with the admin token.
func TestUITargetsFixedAtStart(t *testing.T) {
	t.Parallel()
	const admin = "ui-test-admin-token"
	rogue, rogueURL := newRecorder(t)
	fixed, err := FixedTargets("-targets", "http://127.0.0.1:1,http://127.0.0.1:2", nil)
	if err != nil {
		t.Fatal(err)
	}
	etcdFixed, err := FixedTargets("-etcd-targets", "http://127.0.0.1:3", fixed)
	if err != nil {
		t.Fatal(err)
	}
	base, u := serveTestUI(t, Config{Targets: fixed, EtcdTargets: etcdFixed, Limits: DefaultLimits}, map[string]string{"ADMIN_TOKEN": admin})
	tok := []string{PageTokenHeader, pageToken(t, base)}
	rogueName := strings.TrimPrefix(rogueURL, "http://")
	runBody := func(extra string) string {
		return `{"kind":"strategies","strategies":["dlock"],"stock":5,"think_ms":0,"buyers":4,"duration_s":1` + extra + `}`
	}
	for _, c := range []struct{ body, code string }{
		{runBody(`,"targets":"` + rogueURL + `"`), "target_url_refused"},
		{runBody(`,"targets":["` + rogueURL + `"]`), "target_url_refused"},
		{runBody(`,"targets":[0,"` + rogueURL + `/"]`), "target_url_refused"},
		{runBody(`,"targets":["//` + rogueName + `"]`), "target_url_refused"},
		{runBody(`,"etcd_targets":["` + rogueURL + `"]`), "target_url_refused"},
		{runBody(`,"targets":"http://127.0.0.1:1,` + rogueURL + `"`), "target_url_refused"},
		{runBody(`,"targets":["` + rogueName + `"]`), "unknown_target"},
		{runBody(`,"targets":[2]`), "unknown_target"},
		{runBody(`,"targets":[-1]`), "unknown_target"},
		{runBody(`,"etcd_targets":[1]`), "unknown_target"},
		{runBody(`,"targets":{"url":"` + rogueURL + `"}`), "bad_request"},
	} {
		var p uiProblemBody
		got := uiCall(t, "POST", base+"/api/runs", "application/json", c.body, &p, tok...)
		if got != 400 || p.Code != c.code {
			t.Errorf("POST %s = %d %+v, want 400 %s", c.body, got, p, c.code)
		}
		if got == 202 { // the run went: let it end, so that the recorder saw all it will
			for _, r := range u.runsList() {
				readEvents(t, base+"/api/runs/"+r+"/events")
			}
		}
	}
	if got := rogue.got(); len(got) > 0 {
		t.Errorf("the URL named in the bodies got %d requests, want none: %q", len(got), got)
	}
	// By name or by index, among those fixed at start: past the target checks, refused by
	// compare's own (a 400 bad_request with its message).
	for _, pick := range []string{`"127.0.0.1:2"`, `[1]`, `["127.0.0.1:1",1]`, `"0, 1"`, `[]`} {
		var p uiProblemBody
		body := strings.Replace(runBody(`,"targets":`+pick), `"stock":5`, `"stock":-1`, 1)
		if got := uiCall(t, "POST", base+"/api/runs", "application/json", body, &p, tok...); got != 400 || p.Code != "bad_request" {
			t.Errorf("targets %s = %d %+v, want 400 bad_request of compare", pick, got, p)
		}
	}
	var raw map[string]any
	uiCall(t, "GET", base+"/api/options", "", "", &raw)
	if got := fmt.Sprint(raw["targets"], raw["etcd_targets"]); got != "[map[name:127.0.0.1:1 url:http://127.0.0.1:1] map[name:127.0.0.1:2 url:http://127.0.0.1:2]] [map[name:127.0.0.1:3 url:http://127.0.0.1:3]]" {
		t.Errorf("options' targets %s", got)
	}
}

// runsList is the ids of the runs of u.
func (u *Server) runsList() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var ids []string
	for id := range u.runs {
		ids = append(ids, id)
	}
	return ids
}

// TestUICeilings: buyers, duration and rate have ceilings set at start; a run over one is
// refused with a code naming it, a run within them is paced at its rate (the ceiling by
// default) with at most its buyers at once. On the code before, there was no ceiling below
// the command line's own (100000 buyers, 1h).
func TestUICeilings(t *testing.T) {
	t.Parallel()
	fixed, _ := FixedTargets("-targets", "http://127.0.0.1:1", nil)
	base, _ := serveTestUI(t, Config{Targets: fixed, Limits: Limits{Buyers: 16, Duration: 5 * time.Second, Rate: 100}},
		map[string]string{"ADMIN_TOKEN": "ui-test-admin-token"})
	tok := []string{PageTokenHeader, pageToken(t, base)}
	body := func(buyers, seconds, rate int) string {
		return fmt.Sprintf(`{"kind":"strategies","strategies":["dlock"],"stock":5,"think_ms":0,"buyers":%d,"duration_s":%d,"rate":%d}`, buyers, seconds, rate)
	}
	sale := func(fields string) string { return strings.Replace(body(16, 5, 100), `"rate"`, fields+`,"rate"`, 1) }
	for _, c := range []struct {
		body, code, detail string
	}{
		{body(17, 5, 100), "over_max_buyers", "at most 16"},
		{body(100_000, 1, 0), "over_max_buyers", "-max-buyers"},
		{body(16, 6, 100), "over_max_duration", "at most 5 s"},
		{body(16, 3600, 100), "over_max_duration", "-max-duration"},
		{body(16, 5, 101), "over_max_rate", "at most 100 requests per second"},
		{body(16, 5, -1), "bad_request", "rate -1"},
		// Abandonment sales: the window within the duration's ceiling, and the command line's checks.
		{sale(`"pay_within_ms":6000`), "over_max_duration", "payment window of at most 5 s"},
		{sale(`"pay_within_ms":2000,"pay_ratio":0.8,"cancel_ratio":0.3`), "bad_request", "want at most 1"},
		{strings.Replace(sale(`"pay_within_ms":2000`), `"dlock"`, `"naive"`, 1), "bad_request", "strategy naive"},
		// Openings: the burst within the rate's ceiling (loadtest's default burst too), and the command line's checks.
		{sale(`"opening":{"burst":101}`), "over_max_rate", "burst of at most 100 buyers"},
		{sale(`"opening":{}`), "over_max_rate", "opening burst 20000"},
		{sale(`"opening":{"burst":50,"in_ms":500}`), "bad_request", "-opening-in 500ms"},
	} {
		var p uiProblemBody
		if got := uiCall(t, "POST", base+"/api/runs", "application/json", c.body, &p, tok...); got != 400 || p.Code != c.code || !strings.Contains(p.Detail, c.detail) {
			t.Errorf("POST %s = %d %+v, want 400 %s with %q", c.body, got, p, c.code, c.detail)
		}
	}
	var opts struct {
		Limits map[string]int `json:"limits"`
	}
	uiCall(t, "GET", base+"/api/options", "", "", &opts)
	if l := opts.Limits; l["buyers_max"] != 16 || l["duration_s_max"] != 5 || l["rate_max"] != 100 {
		t.Errorf("options' limits %v, want the ceilings", l)
	}
	var run runInfo
	if got := uiCall(t, "POST", base+"/api/runs", "application/json", body(16, 5, 0), &run, tok...); got != 202 ||
		!strings.Contains(run.Command, "-workers 16 -duration 5s -rate 100 -max-workers 16") {
		t.Fatalf("a run at the ceilings = %d %q, want 202 paced at 100/s with at most 16 buyers", got, run.Command)
	}
	uiCall(t, "POST", base+"/api/runs/"+run.ID+"/stop", "application/json", "", nil, tok...)
	readEvents(t, base+"/api/runs/"+run.ID+"/events")
}

// wrongToken is tok with its last character changed: never tok.
func wrongToken(tok string) string {
	last := "A"
	if strings.HasSuffix(tok, last) {
		last = "B"
	}
	return tok[:len(tok)-1] + last
}
