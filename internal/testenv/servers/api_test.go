package servers_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// apiEnv is what an API process needs: a schema and a key prefix of the test's own.
func apiEnv(t *testing.T) map[string]string {
	t.Helper()
	_, prefix := testenv.Redis(t)
	return map[string]string{"DATABASE_URL": testenv.Schema(t), "REDIS_ADDR": testenv.RedisAddr(t),
		"REDIS_KEY_PREFIX": prefix, "ADMIN_TOKEN": "servers-test-token", "LOG_LEVEL": "info"}
}

func TestBuildAPIOnce(t *testing.T) {
	testenv.SkipShort(t, "processes of its own")
	t.Parallel()
	first, second := servers.BuildAPI(t), servers.BuildAPI(t)
	if first != second {
		t.Errorf("BuildAPI = %s, then %s: want one build per test binary", first, second)
	}
	if _, err := os.Stat(first); err != nil {
		t.Errorf("the built binary: %v", err)
	}
}

// TestAPIStop: a ready process answers, pauses and goes on, exits 0 on Stop, and its whole
// log lands in SERVERS_LOGDIR when the test ends.
func TestAPIStop(t *testing.T) {
	testenv.SkipShort(t, "processes of its own")
	dir := t.TempDir()
	t.Setenv("SERVERS_LOGDIR", dir)
	var api *servers.API
	t.Cleanup(func() { // runs after the API's own cleanup
		b, err := os.ReadFile(filepath.Join(dir, t.Name()+"-solo.log"))
		if got, want := string(b), api.Log.String(); err != nil || got != want || !strings.Contains(got, `"msg":"stopped"`) {
			t.Errorf("log file: %v\n%s\nwant the whole log, up to stopped:\n%s", err, got, want)
		}
	})
	api = servers.StartAPI(t, "solo", apiEnv(t))
	if status, _ := api.Get("/readyz", ""); status != http.StatusOK {
		t.Fatalf("GET /readyz = %d after StartAPI", status)
	}
	if n := api.Metric("go_goroutines", ""); n <= 0 {
		t.Errorf("go_goroutines = %v, want > 0", n)
	}
	api.Signal(syscall.SIGSTOP) // Stop continues it first
	api.Stop()
	if !api.Exited() || api.Err() != nil {
		t.Errorf("after Stop: exited %v, err %v; want exit status 0", api.Exited(), api.Err())
	}
	if lines := api.ErrorLines(); len(lines) > 0 {
		t.Errorf("ERROR lines: %q", lines)
	}
}

// TestAPIKill: a killed process is gone at once, and its cleanup asks nothing of it.
func TestAPIKill(t *testing.T) {
	testenv.SkipShort(t, "processes of its own")
	t.Parallel()
	apis := servers.StartAPIs(t, 2, apiEnv(t))
	if apis[0].Name != "api1" || apis[1].Name != "api2" || apis[0].Base == apis[1].Base {
		t.Fatalf("StartAPIs: %s on %s, %s on %s", apis[0].Name, apis[0].Base, apis[1].Name, apis[1].Base)
	}
	apis[0].Kill()
	if status, _ := apis[0].Get("/healthz", ""); status != 0 || apis[0].Err() == nil {
		t.Errorf("after Kill: GET /healthz = %d, exit %v; want no answer and a signal", status, apis[0].Err())
	}
	if status, _ := apis[1].Get("/healthz", ""); status != http.StatusOK {
		t.Errorf("the other process: GET /healthz = %d", status)
	}
}

// TestPostgresStopFastAndStart: the cluster accepts connections, refuses them once stopped,
// and accepts them again on the same port once started.
func TestPostgresStopFastAndStart(t *testing.T) {
	testenv.SkipShort(t, "processes of its own")
	t.Parallel()
	pg := servers.StartPostgres(t)
	accepts := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := pgconn.Connect(ctx, pg.DSN())
		if err != nil {
			return false
		}
		return conn.Close(ctx) == nil
	}
	if !accepts() {
		t.Fatal("no connection after StartPostgres")
	}
	pg.StopFast()
	if accepts() {
		t.Fatal("a connection after StopFast")
	}
	pg.Start()
	if !accepts() {
		t.Fatal("no connection after Start")
	}
}
