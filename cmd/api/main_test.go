package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// TestReadyz: /readyz is this process's readiness, whatever its backends say: with Redis
// unreachable it answers 200 listing redis unavailable (a load balancer keeps the replica, and
// pessimistic and optimistic purchases go on), /readyz?full=1 answers 503 naming redis, and
// seckill_backend_up says 0 for redis and 1 for postgres.
func TestReadyz(t *testing.T) {
	t.Parallel()
	dsn := testenv.Schema(t)
	redisAddr := testenv.RedisAddr(t)
	tests := []struct {
		name      string
		redisAddr string
		redis     string // its state in the body
		full      int    // the status of ?full=1
	}{
		{"all up", redisAddr, "ok", http.StatusOK},
		{"redis unreachable", testenv.FreeAddr(t), "unavailable", http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := startAPI(t, map[string]string{"DATABASE_URL": dsn, "REDIS_ADDR": tt.redisAddr})
			status, body := get(t, api.base+"/readyz")
			want := `"checks":{"postgres":"ok","redis":"` + tt.redis + `","serving":"ok"},"status":"ok"`
			if status != http.StatusOK || !strings.Contains(body, want) {
				t.Fatalf("GET /readyz = %d %s, want 200 with %s", status, body, want)
			}
			status, body = get(t, api.base+"/readyz?full=1")
			if status != tt.full || !strings.Contains(body, `"redis":"`+tt.redis+`"`) {
				t.Fatalf("GET /readyz?full=1 = %d %s, want %d with redis %s", status, body, tt.full, tt.redis)
			}
			if strings.Contains(body, "127.0.0.1") {
				t.Errorf("readyz body leaks an address: %s", body)
			}
			_, metrics := get(t, api.base+"/metrics")
			up := map[string]string{"ok": "1", "unavailable": "0"}[tt.redis]
			for _, want := range []string{`seckill_backend_up{backend="postgres"} 1`, `seckill_backend_up{backend="redis"} ` + up} {
				if !strings.Contains(metrics, want) {
					t.Errorf("/metrics lacks %s", want)
				}
			}
		})
	}
}

func TestUnknownRouteIsProblem(t *testing.T) {
	t.Parallel()
	api := startAPI(t, map[string]string{"DATABASE_URL": testenv.Schema(t), "REDIS_ADDR": testenv.RedisAddr(t)})
	status, body := get(t, api.base+"/nope")
	if status != http.StatusNotFound || !strings.Contains(body, `"code":"not_found"`) {
		t.Fatalf("GET /nope = %d %s, want 404 not_found problem", status, body)
	}
}

func TestBadConfig(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DB_MAX_CONNS": "zero", "SHUTDOWN_TIMEOUT": "soon"}
	err := run(context.Background(), []string{"api"}, lookup(env), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "DB_MAX_CONNS") || !strings.Contains(err.Error(), "SHUTDOWN_TIMEOUT") {
		t.Fatalf("run with bad config = %v, want errors naming DB_MAX_CONNS and SHUTDOWN_TIMEOUT", err)
	}
}

func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	env := map[string]string{"DATABASE_URL": testenv.Schema(t)}
	var out bytes.Buffer
	for range 2 { // idempotent
		out.Reset()
		if err := run(context.Background(), []string{"api", "migrate"}, lookup(env), &out, io.Discard); err != nil {
			t.Fatalf("api migrate: %v", err)
		}
	}
	if got := out.String(); !strings.Contains(got, "migrations applied") {
		t.Fatalf("api migrate printed %q", got)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// readyz asks GET /readyz?full=1, the report that names each backend down at its last check;
// when want is true it asks again until it answers 200, for 15 s at most: the first
// connections' handshakes (TLS, AUTH) on a loaded machine, the whole suite under -race, can
// outlast the 2 s check, and the checker runs every 2 s. It returns the last answer.
func readyz(t *testing.T, base string, want bool) (int, string) {
	t.Helper()
	status, body := get(t, base+"/readyz?full=1")
	for deadline := time.Now().Add(15 * time.Second); want && status != http.StatusOK && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		status, body = get(t, base+"/readyz?full=1")
	}
	return status, body
}

// TestShutdownDelayFailsReadiness: on SIGTERM (here: the context ends) with SHUTDOWN_DELAY,
// /readyz answers 503 while requests are still served, then the server stops cleanly.
func TestShutdownDelayFailsReadiness(t *testing.T) {
	t.Parallel()
	api := startAPI(t, map[string]string{"DATABASE_URL": testenv.Schema(t), "REDIS_ADDR": testenv.RedisAddr(t),
		"SHUTDOWN_DELAY": "2s"})
	if status, body := get(t, api.base+"/readyz"); status != http.StatusOK {
		t.Fatalf("readyz before shutdown = %d %s", status, body)
	}
	api.cancel()
	deadline := time.Now().Add(1500 * time.Millisecond)
	for {
		status, body := get(t, api.base+"/readyz")
		if status == http.StatusServiceUnavailable && strings.Contains(body, `"serving":"unavailable"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz during the shutdown delay = %d %s, want 503 serving unavailable", status, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if status, _ := get(t, api.base+"/healthz"); status != http.StatusOK {
		t.Fatalf("healthz during the shutdown delay = %d, want requests still served", status)
	}
	api.stop() // the program must return nil after the delay
}
