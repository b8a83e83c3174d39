package httpapi_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/buildinfo"
	"github.com/seckill/seckill/internal/httpapi"
	"github.com/seckill/seckill/internal/metrics"
	"github.com/seckill/seckill/internal/reqid"
	"github.com/seckill/seckill/internal/testenv"
)

// TestRequestIDAndMetrics: a sane X-Request-ID is kept, another is replaced; the id is echoed,
// in the problem body and in the request's log lines; each request is counted under its route
// template, the unmatched ones under one label, never the raw path.
func TestRequestIDAndMetrics(t *testing.T) {
	t.Parallel()
	var logs testenv.Buffer
	m := metrics.New(nil, nil, buildinfo.Info{})
	srv := httptest.NewServer(httpapi.NewServer(httpapi.Deps{
		Logger:    slog.New(reqid.NewHandler(slog.NewJSONHandler(&logs, nil))),
		Ready:     func() error { return errors.New("draining") },
		AccessLog: httpapi.AccessLog{Mode: httpapi.AccessLogAll, Sample: 1},
		Metrics:   m.Handler(),
		Requests:  m,
	}))
	defer srv.Close()

	do := func(method, path, id string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if id != "" {
			req.Header.Set("X-Request-ID", id)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}

	resp, _ := do("GET", "/readyz", "lb-7F000001:0001")
	if got := resp.Header.Get("X-Request-ID"); resp.StatusCode != 503 || got != "lb-7F000001:0001" {
		t.Fatalf("GET /readyz: %d, X-Request-ID %q; want 503 and the client's id", resp.StatusCode, got)
	}
	if line := logLine(t, logs.String(), "request"); line[reqid.Key] != "lb-7F000001:0001" || line["route"] != "/readyz" {
		t.Errorf("access log line %v lacks route /readyz and request_id lb-7F000001:0001", line)
	}

	for _, bad := range []string{"", "has space", strings.Repeat("x", reqid.MaxLen+1), "a\"b"} {
		resp, body := do("GET", "/no/such/route/12345", bad)
		id := resp.Header.Get("X-Request-ID")
		if !reqid.Valid(id) || len(id) != 32 || id == bad {
			t.Errorf("X-Request-ID %q sent: answered %q, want a new id", bad, id)
		}
		var p api.Problem
		if err := json.Unmarshal(body, &p); err != nil || p.Code != api.CodeNotFound || p.RequestID != id {
			t.Errorf("404 body %s (%v): want code not_found and request_id %q", body, err, id)
		}
	}
	do("POST", "/healthz", "")
	do("FOO", "/healthz", "")
	do("GET", "/healthz", "")

	_, body := do("GET", "/metrics", "")
	for _, want := range []string{
		`seckill_http_requests_total{code="503",method="GET",route="/readyz"} 1`,
		`seckill_http_requests_total{code="404",method="GET",route="unmatched"} 4`,
		`seckill_http_requests_total{code="405",method="POST",route="unmatched"} 1`,
		`seckill_http_requests_total{code="200",method="GET",route="/healthz"} 1`,
		`seckill_http_request_duration_seconds_count{method="GET",route="/readyz"} 1`,
		`method="other",route="unmatched"`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(string(body), "/no/such") {
		t.Errorf("/metrics has a raw path as a label:\n%s", body)
	}
}

// logLine returns the first JSON log line whose msg is msg.
func logLine(t *testing.T, logs, msg string) map[string]any {
	t.Helper()
	for l := range strings.SplitSeq(logs, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
			return m
		}
	}
	t.Fatalf("no log line %q in:\n%s", msg, logs)
	return nil
}
