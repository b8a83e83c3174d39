package servers

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// API is a cmd/api process of the test's own (see LaunchAPI). Base may change until
// WaitReady returns (a start that lost its port to another process is retried on another);
// after that, its fields and Get, Exited, Err and ErrorLines may be used from any goroutine.
// Signal, Kill, Stop, Wait and Metric fail the test, so call them from the test's goroutine.
type API struct {
	Name string  // names the process in failures and in its log file's name
	Base string  // http://127.0.0.1:port
	Log  *Buffer // what the process printed, across retried starts

	t        T
	bin      string
	env      []string // KEY=value, as the caller gave them
	proc     *process
	attempts int // starts so far
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

// LaunchAPI starts cmd/api (BuildAPI) on a free loopback port below the ephemeral range and
// returns at once; WaitReady waits for it. The process gets env and nothing else, besides
// PATH (unless env sets it) and HTTP_ADDR: env holds all of its configuration, and what the
// process reads from its real environment (SSL_CERT_FILE, say). It dies with the test binary.
//
// When the test ends, the process is continued if paused and stopped as Stop does; the test
// fails if its log reports a data race. The tail of its log is printed if the test failed or
// SERVERS_LOGS is set; with SERVERS_LOGDIR set, the whole log is written to
// $SERVERS_LOGDIR/<test>-<name>.log.
func LaunchAPI(t T, name string, env map[string]string) *API {
	t.Helper()
	a := &API{Name: name, Log: &Buffer{}, t: t, bin: BuildAPI(t)}
	for k, v := range env {
		a.env = append(a.env, k+"="+v)
	}
	a.launch()
	t.Cleanup(a.cleanup)
	return a
}

// launch starts the binary on a port free at this moment.
func (a *API) launch() {
	a.t.Helper()
	addr := FreeAddr(a.t)
	a.Base, a.attempts = "http://"+addr, a.attempts+1
	cmd := exec.Command(a.bin)
	cmd.Env = append(append([]string{"PATH=" + os.Getenv("PATH")}, a.env...), "HTTP_ADDR="+addr)
	proc, err := startProcess(cmd, a.Log)
	if err != nil {
		a.t.Fatalf("start %s: %v", a.Name, err)
	}
	a.proc = proc
}

// WaitReady waits up to 30 s until GET path answers 200, and fails the test with the log's
// tail if the process exits first or the time runs out. A process that exited because
// another took its port is started again on another (three starts at most).
func (a *API) WaitReady(path string) {
	a.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if a.Exited() && a.attempts < 3 && strings.Contains(a.Log.String(), "address already in use") {
			a.launch() // another process took the port between FreeAddr and the API's bind
			continue
		}
		if a.Exited() {
			a.t.Fatalf("%s exited during start-up (%v); log:\n%s", a.Name, a.proc.err, a.Log.Tail(40))
		}
		if status, _ := a.Get(path, ""); status == http.StatusOK {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	a.t.Fatalf("%s: GET %s not 200 within 30s; log:\n%s", a.Name, path, a.Log.Tail(40))
}

func (a *API) cleanup() {
	t := a.t
	a.Stop()
	log := a.Log.String()
	if strings.Contains(log, "WARNING: DATA RACE") {
		t.Errorf("%s reported a data race", a.Name)
	}
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
	if a.Exited() {
		return
	}
	_ = a.proc.cmd.Process.Signal(syscall.SIGCONT)
	if !a.proc.stop(syscall.SIGTERM, 30*time.Second) {
		a.t.Errorf("%s did not exit within 30s of SIGTERM", a.Name)
	} else if a.proc.err != nil {
		a.t.Errorf("%s exited with %v after SIGTERM", a.Name, a.proc.err)
	}
}

// Signal sends sig to the process.
func (a *API) Signal(sig syscall.Signal) {
	a.t.Helper()
	if err := a.proc.signal(sig); err != nil {
		a.t.Fatalf("signal %v to %s: %v", sig, a.Name, err)
	}
}

// Kill sends SIGKILL and waits for the process to be gone.
func (a *API) Kill() {
	a.t.Helper()
	a.Signal(syscall.SIGKILL)
	if !a.Wait(10 * time.Second) {
		a.t.Fatalf("%s still running 10s after SIGKILL", a.Name)
	}
}

// Exited reports whether the process has exited.
func (a *API) Exited() bool { return a.proc.exited() }

// Wait waits up to d for the process to exit and reports whether it did.
func (a *API) Wait(d time.Duration) bool { return a.proc.wait(d) }

// Err is how the process exited, as exec.Cmd.Wait reports it (nil for status 0); nil while
// it runs.
func (a *API) Err() error {
	if !a.Exited() {
		return nil
	}
	return a.proc.err
}

// Get performs GET path (with the bearer token if token is set) and returns status and body;
// status 0 means no answer within 5 s.
func (a *API) Get(path, token string) (int, []byte) {
	req, _ := http.NewRequest(http.MethodGet, a.Base+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// Metric returns the sum of every series of the Prometheus metric name on /metrics whose
// labels contain match (all series when match is empty). It fails the test if /metrics does
// not answer 200.
func (a *API) Metric(name, match string) float64 {
	a.t.Helper()
	status, body := a.Get("/metrics", "")
	if status != http.StatusOK {
		a.t.Fatalf("%s GET /metrics = %d", a.Name, status)
	}
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') || !strings.Contains(rest, match) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}

// ErrorLines returns the process's log lines at level ERROR (cmd/api's JSON log).
func (a *API) ErrorLines() []string {
	var out []string
	for line := range strings.Lines(a.Log.String()) {
		if strings.Contains(line, `"level":"ERROR"`) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// Pid is the process id of the process (of its latest start).
func (a *API) Pid() int { return a.proc.cmd.Process.Pid }
