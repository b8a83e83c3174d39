package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/httpapi"
	"github.com/seckill/seckill/internal/testenv"
)

// TestRequestLimits runs the real server (its http.Server settings, not httptest's) and
// checks the header size limit and the read time limits.
func TestRequestLimits(t *testing.T) {
	t.Parallel()
	base := startAPI(t, map[string]string{"DATABASE_URL": testenv.Schema(t), "REDIS_ADDR": testenv.RedisAddr(t)}).base
	addr := strings.TrimPrefix(base, "http://")
	t.Run("headers under the limit", func(t *testing.T) {
		t.Parallel()
		if status := getWithHeader(t, base+"/healthz", 8<<10); status != http.StatusOK {
			t.Fatalf("GET with an 8 KiB header = %d, want 200", status)
		}
	})
	t.Run("headers too large", func(t *testing.T) {
		t.Parallel()
		if status := getWithHeader(t, base+"/healthz", 32<<10); status != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("GET with a 32 KiB header = %d, want 431", status)
		}
	})
	t.Run("slow headers", func(t *testing.T) {
		t.Parallel()
		// ReadHeaderTimeout (5 s): the server hangs up on a client that never ends its headers.
		answer := rawExchange(t, addr, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n")
		if answer != "" {
			t.Fatalf("unfinished headers got %q, want the connection closed", answer)
		}
	})
	t.Run("slow body", func(t *testing.T) {
		t.Parallel()
		// ReadTimeout (10 s): a body that never arrives ends in a 400 problem or a closed
		// connection, and the answer holds no Go error text.
		answer := rawExchange(t, addr, "POST /api/v1/products/1/purchase HTTP/1.1\r\nHost: x\r\n"+
			"Content-Type: application/json\r\nContent-Length: 40\r\n\r\n{\"user_id\":")
		if answer != "" && !strings.HasPrefix(answer, "HTTP/1.1 400 ") {
			t.Fatalf("unfinished body got %q, want a 400 or the connection closed", answer)
		}
		for _, leak := range []string{"tcp", "i/o timeout", "127.0.0.1"} {
			if strings.Contains(answer, leak) {
				t.Errorf("the answer to an unfinished body leaks %q:\n%s", leak, answer)
			}
		}
	})
}

// getWithHeader sends GET url with one header of about size bytes and returns the status.
func getWithHeader(t *testing.T, url string, size int) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Padding", strings.Repeat("a", size))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// rawExchange writes request on a new connection, never finishes it, and returns the
// server's whole answer, or "" when the server closes the connection without one. The
// server must act within its own time limits: the test gives it 20 s.
func rawExchange(t *testing.T, addr, request string) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	answer, err := io.ReadAll(conn)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the server kept an unfinished request open for 20 s")
	}
	return string(answer)
}

// TestRateLimitConfig: the per-user limit is on by default, the per-address limit off, and
// the settings reach the server.
func TestRateLimitConfig(t *testing.T) {
	t.Parallel()
	cfg, err := parseConfig(nil, lookup(nil), io.Discard)
	want := httpapi.RateLimits{User: httpapi.Rate{N: 10, Per: time.Second}}
	if err != nil || cfg.rateLimits != want {
		t.Fatalf("default rate limits = %+v, %v; want %+v", cfg.rateLimits, err, want)
	}
	env := map[string]string{"RATE_LIMIT_USER": "fast", "RATE_LIMIT_ADDR": "5/d"}
	_, err = parseConfig(nil, lookup(env), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "RATE_LIMIT_USER") || !strings.Contains(err.Error(), "RATE_LIMIT_ADDR") {
		t.Fatalf("bad rate limits = %v, want errors naming RATE_LIMIT_USER and RATE_LIMIT_ADDR", err)
	}

	rdb, prefix := testenv.Redis(t) // its cleanup removes the server's keys but the limiter's
	const rateToken = "rate-limit-admin-token"
	base := startAPI(t, map[string]string{"DATABASE_URL": testenv.Schema(t), "REDIS_ADDR": testenv.RedisAddr(t),
		"REDIS_KEY_PREFIX": prefix, "ADMIN_TOKEN": rateToken, "RATE_LIMIT_USER": "1/h"}).base
	id := createProduct(t, base, rateToken)
	t.Cleanup(func() { rdb.Del(context.Background(), fmt.Sprintf("rate:%s:rl:u:%d:9", prefix, id)) })
	for i, want := range []int{http.StatusCreated, http.StatusTooManyRequests} {
		resp := postJSON(t, fmt.Sprintf("%s/api/v1/products/%d/purchase", base, id), "", `{"user_id":9}`)
		if resp.StatusCode != want {
			t.Fatalf("purchase %d = %d, want %d", i, resp.StatusCode, want)
		}
		if want == http.StatusTooManyRequests {
			if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs < 1 {
				t.Fatalf("Retry-After = %q, want whole seconds >= 1", resp.Header.Get("Retry-After"))
			}
		}
	}
}

// TestSecretsNotLogged: neither the admin token nor one a client guessed appears in the
// debug log of a run that used both.
func TestSecretsNotLogged(t *testing.T) {
	t.Parallel()
	token, guess := testenv.Name("secret-token-"), testenv.Name("guessed-token-")
	api := startAPI(t, map[string]string{"DATABASE_URL": testenv.Schema(t), "REDIS_ADDR": testenv.RedisAddr(t),
		"ADMIN_TOKEN": token, "LOG_LEVEL": "debug"})
	id := createProduct(t, api.base, token)
	postJSON(t, api.base+"/api/v1/products", guess, `{"name":"x","stock":1}`)
	postJSON(t, api.base+"/api/v1/products", "", `{"name":`)
	postJSON(t, fmt.Sprintf("%s/api/v1/products/%d/purchase", api.base, id), "", `{"user_id":1}`)
	get(t, api.base+"/readyz")
	logs := api.stop()
	if !strings.Contains(logs, "product created") {
		t.Fatalf("the log misses events, so the test proves nothing:\n%s", logs)
	}
	for _, secret := range []string{token, guess} {
		if strings.Contains(logs, secret) {
			t.Errorf("the log holds %q:\n%s", secret, logs)
		}
	}
}

// TestDatabasePasswordNotLogged: a start-up that cannot reach PostgreSQL says so without the
// password of DATABASE_URL, in the log and in the error.
func TestDatabasePasswordNotLogged(t *testing.T) {
	t.Parallel()
	const password = "pw-not-for-logs"
	env := map[string]string{
		"DATABASE_URL":    "postgres://seckill:" + password + "@" + testenv.FreeAddr(t) + "/seckill?sslmode=disable",
		"STARTUP_TIMEOUT": "1s", "LOG_LEVEL": "debug",
	}
	logs := &testenv.Buffer{}
	err := run(context.Background(), []string{"api"}, lookup(env), io.Discard, logs)
	if err == nil {
		t.Fatal("run with PostgreSQL unreachable returned nil")
	}
	if strings.Contains(err.Error(), password) || strings.Contains(logs.String(), password) {
		t.Fatalf("the password leaked: error %v; log:\n%s", err, logs)
	}
}

func createProduct(t *testing.T, base, token string) int64 {
	t.Helper()
	resp := postJSON(t, base+"/api/v1/products", token, `{"name":"limits","stock":5,"strategy":"optimistic"}`)
	loc := resp.Header.Get("Location")
	id, err := strconv.ParseInt(loc[strings.LastIndex(loc, "/")+1:], 10, 64)
	if resp.StatusCode != http.StatusCreated || err != nil {
		t.Fatalf("create product = %d, Location %q", resp.StatusCode, loc)
	}
	return id
}

// postJSON posts body with an optional bearer token (see send); the response body is drained.
func postJSON(t *testing.T, url, token, body string) *http.Response {
	t.Helper()
	resp, _ := send(t, http.MethodPost, url, token, body)
	return resp
}
