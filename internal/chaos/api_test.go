//go:build linux

package chaos_test

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os/exec"
	"testing"

	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/testenv/contract"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// adminToken is the ADMIN_TOKEN of every API process the tests start.
const adminToken = "chaos-admin-token"

// apiProc is one running cmd/api process, started by servers.
type apiProc = servers.API

// apiClient is a client of p's API with the admin token, for the calls that are not
// purchases (the groups of buyers have clients of their own: see launch). Its exchanges are
// checked against the API's description (internal/testenv/contract) and fail t.
func apiClient(t testing.TB, p *apiProc) *client.Client {
	return client.New(p.Base, &client.Options{AdminToken: adminToken,
		HTTPClient: contract.Client(t, &http.Client{Timeout: client.DefaultTimeout})})
}

// ready asks p's GET /readyz?full=1 once, for 5 s at most: nil when the process can serve
// and every backend answered its last check (the background checker runs every 2 s).
func ready(t testing.TB, p *apiProc) error {
	if status, body := p.Get("/readyz?full=1", ""); status != http.StatusOK {
		return fmt.Errorf("%s GET /readyz?full=1 = %d %s", p.Name, status, body)
	}
	return nil
}

// apiEnv is the environment of the API processes on b: sensible test defaults, then b's
// PostgreSQL and Redis (DATABASE_URL, REDIS_ADDR, REDIS_KEY_PREFIX), then env.
func (b backend) apiEnv(env map[string]string) map[string]string {
	e := map[string]string{
		"ADMIN_TOKEN": adminToken, "LOG_LEVEL": "warn", "DB_MAX_CONNS": "5",
		"LOCK_TTL": "500ms", "LOCK_WAIT": "1s", "SHUTDOWN_TIMEOUT": "5s", "STARTUP_TIMEOUT": "20s",
		"DATABASE_URL": b.dsn, "REDIS_ADDR": b.redis, "REDIS_KEY_PREFIX": b.prefix,
	}
	maps.Copy(e, env)
	return e
}

// startAPIs starts n API processes on b with env (see apiEnv) and waits until each is ready.
func (b backend) startAPIs(t *testing.T, n int, env map[string]string) []*apiProc {
	t.Helper()
	return servers.StartAPIs(t, n, b.apiEnv(withLockHistory(t, env)))
}

// startAPI starts one API process on b with env (see apiEnv); WaitReady waits for it.
func (b backend) startAPI(t *testing.T, name string, env map[string]string) *apiProc {
	t.Helper()
	return servers.LaunchAPI(t, name, b.apiEnv(withLockHistory(t, env)))
}

// startPair starts two API processes with env (see apiEnv), the first named name on the
// PostgreSQL at dsn, the second named "other" on b's, and waits until both are ready.
func (b backend) startPair(t *testing.T, name, dsn string, env map[string]string) (*apiProc, *apiProc) {
	t.Helper()
	first := b.startAPI(t, name, withEnv(env, "DATABASE_URL", dsn))
	other := b.startAPI(t, "other", withEnv(env, "DATABASE_URL", b.dsn))
	first.WaitReady("/readyz")
	other.WaitReady("/readyz")
	return first, other
}

// withEnv returns a copy of env with key set to value.
func withEnv(env map[string]string, key, value string) map[string]string {
	e := maps.Clone(env)
	if e == nil {
		e = map[string]string{}
	}
	e[key] = value
	return e
}

// exitCode is the exit status of a finished process, -1 if it died of a signal.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 0
}
