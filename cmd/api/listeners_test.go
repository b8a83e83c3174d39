package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

const testAdminToken = "listeners-test-admin-token"

// do sends method to url with the bearer token (when not empty) and an X-Request-ID, and
// returns the status and body.
func do(t *testing.T, method, url, token, id, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-ID", id)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// logLines parses logs as JSON lines, failing the test on a line that is not JSON, and
// returns those whose msg is msg.
func logLines(t *testing.T, logs, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for l := range strings.SplitSeq(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("log line is not JSON: %q", l)
			continue
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// TestAdminAddr: with ADMIN_ADDR, the public listener (HTTP_ADDR, the one a load balancer
// reaches) answers 404 not_found for /metrics and the admin routes and serves the rest; the
// admin listener serves /metrics and the admin routes. Without it, one listener serves all.
func TestAdminAddr(t *testing.T) {
	t.Parallel()
	adminAddr := testenv.FreeAddr(t)
	api := startAPI(t, map[string]string{"DATABASE_URL": testenv.Schema(t), "REDIS_ADDR": testenv.RedisAddr(t),
		"REDIS_KEY_PREFIX": testenv.Name("admin"), "ADMIN_TOKEN": testAdminToken, "ADMIN_ADDR": adminAddr})
	admin := "http://" + adminAddr
	for _, tc := range []struct{ method, path string }{
		{"GET", "/metrics"}, {"POST", "/api/v1/products"}, {"GET", "/api/v1/products/1/audit"},
	} {
		status, body := do(t, tc.method, api.base+tc.path, testAdminToken, "public-1", `{"name":"x","stock":1,"strategy":"pessimistic"}`)
		if status != http.StatusNotFound || !strings.Contains(body, `"code":"not_found"`) {
			t.Errorf("public %s %s = %d %s, want 404 not_found", tc.method, tc.path, status, body)
		}
	}
	status, body := do(t, "POST", admin+"/api/v1/products", testAdminToken, "admin-1", `{"name":"x","stock":1,"strategy":"pessimistic"}`)
	if status != http.StatusCreated {
		t.Fatalf("admin POST /api/v1/products = %d %s, want 201", status, body)
	}
	var p struct{ ID int64 }
	_ = json.Unmarshal([]byte(body), &p)
	if status, body := do(t, "POST", fmt.Sprintf("%s/api/v1/products/%d/purchase", api.base, p.ID), "", "public-2", `{"user_id":7}`); status != http.StatusCreated {
		t.Errorf("public purchase = %d %s, want 201", status, body)
	}
	if status, body := do(t, "GET", fmt.Sprintf("%s/api/v1/products/%d/audit", admin, p.ID), testAdminToken, "admin-2", ""); status != http.StatusOK {
		t.Errorf("admin audit = %d %s, want 200", status, body)
	}
	if status, body := do(t, "GET", admin+"/metrics", "", "admin-3", ""); status != http.StatusOK || !strings.Contains(body, "seckill_backend_up") {
		t.Errorf("admin /metrics = %d, want 200 with seckill_backend_up", status)
	}
	if status, _ := do(t, "GET", api.base+"/readyz", "", "public-3", ""); status != http.StatusOK {
		t.Errorf("public /readyz = %d, want 200", status)
	}
}

// TestAccessLog: with the defaults, one JSON line "request" per request with its method,
// route template, status, problem code, duration, client and request id; a wrong admin token
// logs a warning that never holds the token; ACCESS_LOG=errors logs only the 5xx, and
// ACCESS_LOG_SAMPLE=0 leaves the 409s out.
func TestAccessLog(t *testing.T) {
	t.Parallel()
	dsn, rdb := testenv.Schema(t), testenv.RedisAddr(t)
	api := startAPI(t, map[string]string{"DATABASE_URL": dsn, "REDIS_ADDR": rdb, "REDIS_KEY_PREFIX": testenv.Name("access"),
		"ADMIN_TOKEN": testAdminToken, "ACCESS_LOG_SAMPLE": "1"})
	status, body := do(t, "POST", api.base+"/api/v1/products", testAdminToken, "create-1", `{"name":"x","stock":1,"strategy":"pessimistic"}`)
	if status != http.StatusCreated {
		t.Fatalf("create = %d %s", status, body)
	}
	var p struct{ ID int64 }
	_ = json.Unmarshal([]byte(body), &p)
	buy := fmt.Sprintf("%s/api/v1/products/%d/purchase", api.base, p.ID)
	do(t, "POST", buy, "", "buy-1", `{"user_id":1}`)
	do(t, "POST", buy, "", "buy-2", `{"user_id":2}`) // sold_out
	const wrong = "not-the-admin-token-at-all"
	do(t, "POST", api.base+"/api/v1/products", wrong, "admin-wrong", `{}`)
	logs := api.stop()

	byID := map[string]map[string]any{}
	for _, l := range logLines(t, logs, "request") {
		byID[fmt.Sprint(l["request_id"])] = l
	}
	route := "/api/v1/products/:id/purchase"
	for id, want := range map[string]string{
		"create-1": "POST /api/v1/products 201 ", "buy-1": "POST " + route + " 201 ",
		"buy-2": "POST " + route + " 409 sold_out", "admin-wrong": "POST /api/v1/products 401 unauthorized",
	} {
		l := byID[id]
		got := fmt.Sprintf("%v %v %v %v", l["method"], l["route"], l["status"], l["code"])
		if got != want || l["level"] != "INFO" || l["remote"] != "127.0.0.1" || l["duration_ms"] == nil {
			t.Errorf("access line of %s = %v, want %q at INFO with remote and duration_ms", id, l, want)
		}
	}
	auth := logLines(t, logs, "admin auth failed")
	if len(auth) != 1 || auth[0]["level"] != "WARN" || auth[0]["request_id"] != "admin-wrong" || auth[0]["reason"] != "wrong token" {
		t.Errorf("admin auth lines = %v, want one WARN for admin-wrong, reason wrong token", auth)
	}
	if strings.Contains(logs, wrong) || strings.Contains(logs, testAdminToken) {
		t.Errorf("a token is in the log:\n%s", logs)
	}

	for _, tc := range []struct {
		env  map[string]string
		want int // access lines for a 201 and a 409
	}{
		{map[string]string{"ACCESS_LOG": "errors"}, 0},
		{map[string]string{"ACCESS_LOG_SAMPLE": "0"}, 1},
		{map[string]string{"ACCESS_LOG": "off"}, 0},
	} {
		env := map[string]string{"DATABASE_URL": dsn, "REDIS_ADDR": rdb, "REDIS_KEY_PREFIX": testenv.Name("access"), "ADMIN_TOKEN": testAdminToken}
		for k, v := range tc.env {
			env[k] = v
		}
		api := startAPI(t, env)
		status, body := do(t, "POST", api.base+"/api/v1/products", testAdminToken, "c", `{"name":"x","stock":0,"strategy":"pessimistic"}`)
		if status != http.StatusCreated {
			t.Fatalf("create = %d %s", status, body)
		}
		_ = json.Unmarshal([]byte(body), &p)
		do(t, "POST", fmt.Sprintf("%s/api/v1/products/%d/purchase", api.base, p.ID), "", "sold", `{"user_id":1}`)
		if got := logLines(t, api.stop(), "request"); len(got) != tc.want {
			t.Errorf("%v: access lines %v, want %d", tc.env, got, tc.want)
		}
	}
}

// TestExporterErrorsAreJSON: a trace collector that refuses every export (400) makes the
// OpenTelemetry exporter report an error; it reaches the program's log as a JSON line, like
// every other line the program wrote. Not parallel: the libraries' loggers are process-wide
// and follow the latest run.
func TestExporterErrorsAreJSON(t *testing.T) {
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "refused", http.StatusBadRequest)
	}))
	defer collector.Close()
	api := startAPI(t, map[string]string{"DATABASE_URL": testenv.Schema(t), "REDIS_ADDR": testenv.RedisAddr(t),
		"REDIS_KEY_PREFIX": testenv.Name("otelerr"), "OTEL_EXPORTER_OTLP_ENDPOINT": collector.URL})
	get(t, api.base+"/healthz")
	// The batch processor exports every 5 s.
	testenv.Eventually(t, 20*time.Second, "the exporter's error in the log", func() bool {
		return strings.Contains(api.logs.String(), `"msg":"opentelemetry"`)
	})
	logs := api.stop()
	if lines := logLines(t, logs, "opentelemetry"); len(lines) == 0 || !strings.Contains(fmt.Sprint(lines[0]["err"]), "400") {
		t.Errorf("opentelemetry lines = %v, want the export's 400", lines)
	}
}
