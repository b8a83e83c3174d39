package main

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// authToken is the ADMIN_TOKEN of the API runs in the Redis AUTH and TLS tests.
const authToken = "redis-auth-admin-token"

// TestRedisAuth runs the API against a redis-server of its own that requires a password and
// knows an ACL user: with the right credentials, from the variables or the URL, it is ready
// and sells; without them or with wrong ones, /readyz says Redis is down. No password ever
// appears in the debug log or an answer.
func TestRedisAuth(t *testing.T) {
	t.Parallel()
	const (
		password = "default-pw-s3cr3t-a"
		alicePw  = "alice-pw-s3cr3t-b"
		wrongPw  = "wrong-pw-s3cr3t-c"
	)
	srv := servers.StartRedis(t, "--requirepass", password, "--user", "alice", "on", ">"+alicePw, "~*", "&*", "+@all")
	// Independent masters for REDLOCK_ADDRS, each with a password of its own given in its URL.
	var redlock []string
	for i := range 3 {
		pw := fmt.Sprintf("node%d-pw-s3cr3t-d", i)
		redlock = append(redlock, "redis://:"+pw+"@"+servers.StartRedis(t, "--requirepass", pw).Addr)
	}
	dsn := testenv.Schema(t)
	tests := []struct {
		name  string
		env   map[string]string
		ready bool
	}{
		{"REDIS_PASSWORD", map[string]string{"REDIS_ADDR": srv.Addr, "REDIS_PASSWORD": password}, true},
		{"REDIS_USERNAME and REDIS_PASSWORD", map[string]string{"REDIS_ADDR": srv.Addr,
			"REDIS_USERNAME": "alice", "REDIS_PASSWORD": alicePw}, true},
		{"URL credentials win", map[string]string{"REDIS_ADDR": "redis://alice:" + alicePw + "@" + srv.Addr + "/0",
			"REDIS_PASSWORD": wrongPw}, true},
		{"Redlock nodes with their own passwords", map[string]string{"REDIS_ADDR": srv.Addr, "REDIS_PASSWORD": password,
			"REDLOCK_ADDRS": strings.Join(redlock, ",")}, true},
		{"no password", map[string]string{"REDIS_ADDR": srv.Addr}, false},
		{"wrong password", map[string]string{"REDIS_ADDR": srv.Addr, "REDIS_PASSWORD": wrongPw}, false},
		{"wrong user", map[string]string{"REDIS_ADDR": srv.Addr, "REDIS_USERNAME": "bob", "REDIS_PASSWORD": alicePw}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"DATABASE_URL": dsn, "ADMIN_TOKEN": authToken, "LOG_LEVEL": "debug",
				"REDIS_KEY_PREFIX": testenv.Name("auth")}
			for k, v := range tt.env {
				env[k] = v
			}
			api := startAPI(t, env)
			status, body := readyz(t, api.base, tt.ready)
			answers := body
			if !tt.ready {
				if status != http.StatusServiceUnavailable || !strings.Contains(body, `"redis"`) {
					t.Fatalf("GET /readyz = %d %s, want 503 naming redis", status, body)
				}
			} else {
				if status != http.StatusOK {
					t.Fatalf("GET /readyz = %d %s, want 200", status, body)
				}
				for _, strategy := range []string{"redis", "dlock"} {
					answers += buyOnce(t, api.base, strategy)
				}
			}
			logs := api.stop()
			if !strings.Contains(logs, "redis topology") {
				t.Fatalf("the log misses the start-up lines, so the test proves nothing:\n%s", logs)
			}
			if strings.Contains(logs, "s3cr3t") || strings.Contains(answers, "s3cr3t") {
				t.Fatalf("a password leaked; answers %s\nlog:\n%s", answers, logs)
			}
		})
	}
}

// buyOnce creates a product of strategy with the admin token, buys it once (201) and returns
// the answers' bodies.
func buyOnce(t *testing.T, base, strategy string) string {
	t.Helper()
	resp, body := send(t, http.MethodPost, base+"/api/v1/products", authToken,
		fmt.Sprintf(`{"name":"auth %s","stock":3,"strategy":%q}`, strategy, strategy))
	loc := resp.Header.Get("Location")
	id, err := strconv.ParseInt(loc[strings.LastIndex(loc, "/")+1:], 10, 64)
	if resp.StatusCode != http.StatusCreated || err != nil {
		t.Fatalf("create a %s product = %d %s", strategy, resp.StatusCode, body)
	}
	resp, buy := send(t, http.MethodPost, fmt.Sprintf("%s/api/v1/products/%d/purchase", base, id), "", `{"user_id":7}`)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("buy the %s product = %d %s, want 201", strategy, resp.StatusCode, buy)
	}
	return body + buy
}

// send sends a JSON body with an optional bearer token and returns the response and its body.
func send(t *testing.T, method, url, token, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}
