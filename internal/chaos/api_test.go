//go:build linux

package chaos_test

import (
	"errors"
	"os/exec"
	"testing"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// adminToken is the ADMIN_TOKEN of every API process the tests start.
const adminToken = "chaos-admin-token"

// apiProc is one running cmd/api process, started by servers.
type apiProc = servers.API

// apiEnv is the environment of the API processes: sensible test defaults, then env.
func apiEnv(env map[string]string) map[string]string {
	e := map[string]string{
		"ADMIN_TOKEN": adminToken, "LOG_LEVEL": "warn", "DB_MAX_CONNS": "5",
		"LOCK_TTL": "500ms", "LOCK_WAIT": "1s", "SHUTDOWN_TIMEOUT": "5s", "STARTUP_TIMEOUT": "20s",
	}
	for k, v := range env {
		e[k] = v
	}
	return e
}

// startAPIs starts n API processes with env (see apiEnv) and waits until each is ready.
func startAPIs(t *testing.T, n int, env map[string]string) []*apiProc {
	t.Helper()
	return servers.StartAPIs(t, n, apiEnv(env))
}

// startAPI starts one API process with env (see apiEnv); WaitReady waits for it.
func startAPI(t *testing.T, name string, env map[string]string) *apiProc {
	t.Helper()
	return servers.LaunchAPI(t, name, apiEnv(env))
}

// exitCode is the exit status of a finished process, -1 if it died of a signal.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 0
}
