package servers

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/seckill/seckill/internal/launch"
)

// API is a cmd/api process of the test's own (see LaunchAPI and launch.API). WaitReady,
// Signal, Kill, Stop and Metric fail the test, so call them from the test's goroutine.
type API struct {
	*launch.API
	t T
}

// StartAPI starts cmd/api with env (see LaunchAPI) and waits until GET /readyz answers 200.
func StartAPI(t T, name string, env map[string]string) *API {
	t.Helper()
	a := LaunchAPI(t, name, env)
	a.WaitReady("/readyz")
	return a
}

// StartAPIs starts n API processes named api1..apiN with env, all at once, and waits until
// each answers 200 on /readyz.
func StartAPIs(t T, n int, env map[string]string) []*API {
	t.Helper()
	apis := make([]*API, n)
	for i := range apis {
		apis[i] = LaunchAPI(t, fmt.Sprintf("api%d", i+1), env)
	}
	for _, a := range apis {
		a.WaitReady("/readyz")
	}
	return apis
}

// LaunchAPI starts cmd/api (BuildAPI) on a free loopback port and returns at once (WaitReady
// waits); it dies with the test binary, and is stopped when the test ends, failing the test if
// its log reports a data race. Its log's tail is printed on failure or with SERVERS_LOGS, the
// whole log written under SERVERS_LOGDIR (docs/testing.md#launchers).
func LaunchAPI(t T, name string, env map[string]string) *API {
	t.Helper()
	la, err := launch.LaunchAPI(name, env)
	return wrapAPI(t, la, err)
}

// LaunchAPIIn is LaunchAPI for a process inside the namespace ns: it listens on a port of
// ns.Inside, and the test reaches it there (Base). It reaches the servers of the root
// namespace only through forwarders (Forward): give their addresses in env.
func LaunchAPIIn(t T, ns *Netns, name string, env map[string]string) *API {
	t.Helper()
	la, err := launch.LaunchAPIIn(ns.Netns, name, env)
	return wrapAPI(t, la, err)
}

// StartAPIIn is LaunchAPIIn, then WaitReady("/readyz").
func StartAPIIn(t T, ns *Netns, name string, env map[string]string) *API {
	t.Helper()
	a := LaunchAPIIn(t, ns, name, env)
	a.WaitReady("/readyz")
	return a
}

func wrapAPI(t T, la *launch.API, err error) *API {
	t.Helper()
	check(t, err)
	a := &API{API: la, t: t}
	t.Cleanup(a.cleanup)
	return a
}

// WaitReady waits up to 30 s until GET path answers 200, and fails the test with the log's
// tail if the process exits first or the time runs out (see launch.API.WaitReady).
func (a *API) WaitReady(path string) {
	a.t.Helper()
	if err := a.API.WaitReady(path); err != nil {
		a.t.Fatal(err)
	}
}

func (a *API) cleanup() {
	t := a.t
	if err := a.API.Close(); err != nil {
		t.Error(err)
	}
	log := a.Log.String()
	if dir := os.Getenv("SERVERS_LOGDIR"); dir != "" {
		file := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+"-"+a.Name+".log")
		if err := os.WriteFile(file, []byte(log), 0o644); err != nil {
			t.Errorf("write %s's log: %v", a.Name, err)
		}
	}
	if t.Failed() || os.Getenv("SERVERS_LOGS") != "" {
		t.Logf("%s log (last lines):\n%s", a.Name, a.Log.Tail(40))
	}
}

// Stop continues the process if it is paused, sends SIGTERM and waits up to 30 s for it to
// exit. It fails the test if the process does not exit in time (it is killed then) or exits
// with a status other than 0. It does nothing if the process has exited already (Err says
// how).
func (a *API) Stop() {
	a.t.Helper()
	if err := a.API.Stop(); err != nil {
		a.t.Error(err)
	}
}

// Signal sends sig to the process.
func (a *API) Signal(sig syscall.Signal) {
	a.t.Helper()
	if err := a.API.Signal(sig); err != nil {
		a.t.Fatal(err)
	}
}

// Kill sends SIGKILL and waits for the process to be gone.
func (a *API) Kill() {
	a.t.Helper()
	if err := a.API.Kill(); err != nil {
		a.t.Fatal(err)
	}
}

// Metric returns the sum of every series of the Prometheus metric name on /metrics whose
// labels contain match (all series when match is empty). It fails the test if /metrics does
// not answer 200.
func (a *API) Metric(name, match string) float64 {
	a.t.Helper()
	v, err := a.API.Metric(name, match)
	if err != nil {
		a.t.Fatal(err)
	}
	return v
}
