package servers

import (
	"encoding/csv"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv/missing"
)

// HAProxyBin returns the path of haproxy, or skips the test (see missing.Skip). Debian's
// package puts it in /usr/sbin, which a non-root PATH may lack.
func HAProxyBin(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"haproxy", "/usr/sbin/haproxy", "/usr/local/sbin/haproxy"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	missing.Skip(t, "haproxy not found: this test starts a load balancer of its own (`make up` installs Debian's haproxy)")
	return ""
}

// HAProxyConfig is the path of the project's load-balancer configuration,
// deploy/haproxy/haproxy.cfg: in the source tree this file was compiled from, or else (a
// -trimpath build) in the first directory up from the working directory that has it.
func HAProxyConfig() string {
	const rel = "deploy/haproxy/haproxy.cfg"
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Join(filepath.Dir(file), "..", "..", "..", rel)
	}
	dir, _ := os.Getwd()
	for {
		if _, err := os.Stat(filepath.Join(dir, rel)); err == nil || filepath.Dir(dir) == dir {
			return filepath.Join(dir, rel)
		}
		dir = filepath.Dir(dir)
	}
}

// HAProxy is an haproxy process of the test's own, with the project's configuration
// (HAProxyConfig), in front of API processes on loopback. It is stopped when the test ends.
// Its methods may be called from any goroutine but Stop, which is for the test's.
type HAProxy struct {
	Addr  string  // 127.0.0.1:port where clients connect
	Base  string  // http://Addr
	Stats string  // 127.0.0.1:port of HAProxy's stats page (/stats;csv)
	Log   *Buffer // what haproxy printed: its errors, and each request that went wrong

	t     T
	proc  *process
	cmd   []string // haproxy's command line
	env   []string // and environment, for Restart
	names []string // the api backend's servers
}

// StartHAProxy starts haproxy with the project's configuration in front of the servers at
// backends (host:port each, six at most: LB_API1..LB_API6), on free loopback ports, and waits
// until it serves and has marked every backend up (10 s at most). env adds to, or overrides,
// the environment it is given (see deploy/haproxy/haproxy.cfg).
func StartHAProxy(t testing.TB, backends []string, env map[string]string) *HAProxy {
	t.Helper()
	return startHAProxy(t, backends, env, false)
}

// StartHAProxyMasterWorker is StartHAProxy in master-worker mode (-W), as Debian's systemd
// unit runs it: a master process and a worker that serves, which Reload replaces.
func StartHAProxyMasterWorker(t testing.TB, backends []string, env map[string]string) *HAProxy {
	t.Helper()
	return startHAProxy(t, backends, env, true)
}

func startHAProxy(t testing.TB, backends []string, env map[string]string, masterWorker bool) *HAProxy {
	t.Helper()
	bin := HAProxyBin(t)
	if len(backends) > 6 {
		t.Fatalf("StartHAProxy: %d backends, the configuration has room for 6", len(backends))
	}
	h := &HAProxy{Log: &Buffer{}, t: t}
	for try := 1; ; try++ {
		h.Addr, h.Stats = FreeAddr(t), FreeAddr(t)
		h.Base = "http://" + h.Addr
		vars := map[string]string{"LB_ADDR": h.Addr, "LB_STATS_ADDR": h.Stats}
		for i, b := range backends {
			vars[fmt.Sprintf("LB_API%d", i+1)] = b
		}
		for k, v := range env {
			vars[k] = v
		}
		// -db: in the foreground, no daemon.
		h.cmd = []string{bin, "-db", "-f", HAProxyConfig()}
		if masterWorker {
			h.cmd = append(h.cmd, "-W")
		}
		h.env = []string{"PATH=" + os.Getenv("PATH")}
		for k, v := range vars {
			h.env = append(h.env, k+"="+v)
		}
		proc := h.start()
		// Another test binary may bind a port FreeAddr found free before haproxy does: it
		// exits at once then, and tries two other ports.
		if try == 3 || !proc.wait(500*time.Millisecond) || !strings.Contains(h.Log.String(), "cannot bind socket") {
			break
		}
	}
	t.Cleanup(func() {
		h.Stop()
		if t.Failed() || os.Getenv("SERVERS_LOGS") != "" {
			t.Logf("haproxy log (last lines):\n%s", h.Log.Tail(30))
		}
	})
	for i := range backends {
		h.names = append(h.names, fmt.Sprintf("api%d", i+1))
	}
	h.WaitState(10*time.Second, "UP", h.names...)
	return h
}

// start starts haproxy with h's command line and environment.
func (h *HAProxy) start() *process {
	h.t.Helper()
	cmd := exec.Command(h.cmd[0], h.cmd[1:]...)
	cmd.Env = h.env
	proc, err := startProcess(cmd, h.Log)
	if err != nil {
		h.t.Fatalf("start haproxy: %v", err)
	}
	h.proc = proc
	return proc
}

// Reload replaces the worker of a master-worker haproxy (StartHAProxyMasterWorker) as
// `systemctl reload haproxy` does (SIGUSR2 to the master): the master starts a new worker,
// which takes over the listening sockets, and the old worker finishes the requests it has and
// exits; no connection is refused or reset. It waits (10 s at most) until the master reports
// the new worker loaded, and returns how long that took. Call it from the test's goroutine.
func (h *HAProxy) Reload() time.Duration {
	h.t.Helper()
	if !slices.Contains(h.cmd, "-W") {
		h.t.Fatal("haproxy: Reload needs master-worker mode (StartHAProxyMasterWorker)")
	}
	const loaded = "Loading success."
	before := strings.Count(h.Log.String(), loaded)
	start := time.Now()
	if err := h.proc.signal(syscall.SIGUSR2); err != nil {
		h.t.Fatalf("reload haproxy: %v", err)
	}
	for strings.Count(h.Log.String(), loaded) == before {
		if h.proc.exited() || time.Since(start) > 10*time.Second {
			h.t.Fatalf("haproxy did not reload within 10s (%v); log:\n%s", h.proc.Err(), h.Log.Tail(30))
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

// Stop sends SIGUSR1 (haproxy's soft stop: it stops listening and lets the requests in
// flight finish) and waits up to 10 s; then it is killed.
func (h *HAProxy) Stop() {
	if !h.proc.exited() {
		h.proc.stop(syscall.SIGUSR1, 10*time.Second)
	}
}

// States returns the state of each server of the api backend as HAProxy's stats page says
// it ("UP", "DOWN", "UP 1/2", "DOWN 1/2", "MAINT", ...), by name (api1, api2, ...); nil when
// the page does not answer.
func (h *HAProxy) States() map[string]string {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + h.Stats + "/stats;csv")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil
	}
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(body), "# ")))
	r.FieldsPerRecord = -1
	rows, err := r.ReadAll()
	if err != nil || len(rows) == 0 {
		return nil
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	px, sv, st := col["pxname"], col["svname"], col["status"]
	states := map[string]string{}
	for _, row := range rows[1:] {
		if len(row) > st && row[px] == "api" && row[sv] != "FRONTEND" && row[sv] != "BACKEND" {
			states[row[sv]] = row[st]
		}
	}
	return states
}

// WaitState waits up to d until each named server's state is state ("UP", "DOWN"), and
// fails the test if it is not by then, or if haproxy exits.
func (h *HAProxy) WaitState(d time.Duration, state string, names ...string) {
	h.t.Helper()
	var last map[string]string
	for deadline := time.Now().Add(d); ; time.Sleep(20 * time.Millisecond) {
		if h.proc.exited() {
			h.t.Fatalf("haproxy exited (%v); log:\n%s", h.proc.Err(), h.Log.Tail(30))
		}
		last = h.States()
		all := last != nil
		for _, n := range names {
			all = all && last[n] == state
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("haproxy: servers %v not %s within %v: %v; log:\n%s", names, state, d, last, h.Log.Tail(30))
		}
	}
}
