//go:build linux

package chaos_test

import (
	"testing"

	"github.com/seckill/seckill/internal/testenv"
)

// pgApps names the PostgreSQL sessions of one test's API processes (application_name), so
// that pg_stat_activity and the fence log tell the processes apart, and tell them from those
// of the other tests on the same PostgreSQL.
type pgApps string

func newPGApps() pgApps { return pgApps(testenv.Name("chaos-")) }

// of is the application_name of the process named name.
func (a pgApps) of(name string) string { return string(a) + "-" + name }

// launch starts the API process name on b with env (see apiEnv), its PostgreSQL sessions
// named a.of(name) (on env's DATABASE_URL if it has one, else b's); WaitReady waits for it.
func (a pgApps) launch(t *testing.T, b backend, name string, env map[string]string) *apiProc {
	t.Helper()
	dsn, ok := env["DATABASE_URL"]
	if !ok {
		dsn = b.dsn
	}
	return b.startAPI(t, name, withEnv(env, "DATABASE_URL", withParam(t, dsn, "application_name", a.of(name))))
}

// start is launch for each name, all with env, and waits until each is ready.
func (a pgApps) start(t *testing.T, b backend, env map[string]string, names ...string) []*apiProc {
	t.Helper()
	apis := make([]*apiProc, len(names))
	for i, name := range names {
		apis[i] = a.launch(t, b, name, env)
	}
	for _, p := range apis {
		p.WaitReady("/readyz")
	}
	return apis
}
