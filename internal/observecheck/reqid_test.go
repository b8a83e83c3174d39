package observecheck_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestRequestIDInAPILog: cmd/api as built puts the request's id in its log lines and its
// problem bodies: a product created with X-Request-ID is logged with it, and a refused request
// gets a problem whose request_id is its X-Request-ID.
func TestRequestIDInAPILog(t *testing.T) {
	t.Parallel()
	dsn := testenv.Schema(t)
	_, prefix := testenv.Redis(t)
	const token = "observecheck-admin-token"
	a := servers.StartAPI(t, "api", map[string]string{
		"DATABASE_URL": dsn, "REDIS_ADDR": testenv.RedisAddr(t), "REDIS_KEY_PREFIX": prefix,
		"ADMIN_TOKEN": token, "LOG_LEVEL": "info",
	})
	post := func(path, id, body string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, a.Base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Request-ID", id)
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	if resp, b := post("/api/v1/products", "obs-create-1", `{"name":"x","stock":1}`); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create: %s %s", resp.Status, b)
	}
	resp, b := post("/api/v1/products", "obs-bad-2", `{"name":"x"}`)
	var p struct {
		Code      string
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal(b, &p); err != nil || p.RequestID != "obs-bad-2" || resp.Header.Get("X-Request-ID") != "obs-bad-2" {
		t.Errorf("refused create: %s %s (X-Request-ID %q), want request_id obs-bad-2", resp.Status, b, resp.Header.Get("X-Request-ID"))
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if line := logLine(a.Log.String(), "product created"); line != nil {
			if got := line["request_id"]; got != "obs-create-1" {
				t.Errorf("log line %v: request_id %v, want obs-create-1", line, got)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no \"product created\" line in the API's log:\n%s", a.Log.Tail(20))
		}
	}
}

// logLine returns the first JSON line of log whose msg is msg, or nil.
func logLine(log, msg string) map[string]any {
	for l := range strings.SplitSeq(log, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
			return m
		}
	}
	return nil
}
