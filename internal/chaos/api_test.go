//go:build linux

package chaos_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// adminToken is the ADMIN_TOKEN of every API process the tests start.
const adminToken = "chaos-admin-token"

// apiProc is one running cmd/api process.
type apiProc struct {
	name     string
	base     string   // http://127.0.0.1:port
	env      []string // KEY=value, HTTP_ADDR aside
	cmd      *exec.Cmd
	log      *testenv.Buffer
	done     chan struct{} // closed when the process has exited
	err      error         // cmd.Wait's result, valid after done
	attempts int           // launches so far
}

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
	apis := make([]*apiProc, n)
	for i := range apis {
		apis[i] = startAPI(t, fmt.Sprintf("api%d", i+1), env)
	}
	for _, p := range apis {
		p.waitReady(t)
	}
	return apis
}

// startAPI starts one API process on a free loopback port. When the test ends it is
// continued (if stopped), sent SIGTERM and must exit 0; its log is shown if the test failed.
func startAPI(t *testing.T, name string, env map[string]string) *apiProc {
	t.Helper()
	p := &apiProc{name: name, log: &testenv.Buffer{}}
	for k, v := range apiEnv(env) {
		p.env = append(p.env, k+"="+v)
	}
	p.launch(t)
	t.Cleanup(func() { p.cleanup(t) })
	return p
}

// launch starts the binary on a port free at this moment.
func (p *apiProc) launch(t *testing.T) {
	t.Helper()
	addr := testenv.FreeAddr(t)
	p.base, p.done, p.attempts = "http://"+addr, make(chan struct{}), p.attempts+1
	p.cmd = exec.Command(apiBinary(t))
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HTTP_ADDR=" + addr}, p.env...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} // never outlive the test
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", p.name, err)
	}
	cmd, done := p.cmd, p.done
	go func() { p.err = cmd.Wait(); close(done) }()
}

func (p *apiProc) cleanup(t *testing.T) {
	if !p.exited() {
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		if !p.wait(15 * time.Second) {
			_ = p.cmd.Process.Kill()
			<-p.done
			t.Errorf("%s did not exit within 15s of SIGTERM", p.name)
		} else if p.err != nil {
			t.Errorf("%s exited with %v after SIGTERM", p.name, p.err)
		}
	}
	if strings.Contains(p.log.String(), "WARNING: DATA RACE") {
		t.Errorf("%s reported a data race", p.name)
	}
	if dir := os.Getenv("CHAOS_LOGDIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, t.Name()+"-"+p.name+".log"), []byte(p.log.String()), 0o644)
	}
	if t.Failed() || os.Getenv("CHAOS_LOGS") != "" {
		t.Logf("%s log (last lines):\n%s", p.name, p.log.Tail(40))
	}
}

// waitReady waits until /readyz answers 200, failing if the process exits first.
func (p *apiProc) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if p.exited() && p.attempts < 3 && strings.Contains(p.log.String(), "address already in use") {
			p.launch(t) // another process took the port between our check and the API's bind
			continue
		}
		if p.exited() {
			t.Fatalf("%s exited during start-up (%v); log:\n%s", p.name, p.err, p.log.Tail(40))
		}
		if status, _ := p.get("/readyz", ""); status == http.StatusOK {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s not ready within 30s; log:\n%s", p.name, p.log.Tail(40))
}

// signal sends sig to the process.
func (p *apiProc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v to %s: %v", sig, p.name, err)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *apiProc) kill(t *testing.T) {
	t.Helper()
	p.signal(t, syscall.SIGKILL)
	if !p.wait(10 * time.Second) {
		t.Fatalf("%s still running 10s after SIGKILL", p.name)
	}
}

func (p *apiProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits up to d for the process to exit and reports whether it did.
func (p *apiProc) wait(d time.Duration) bool {
	select {
	case <-p.done:
		return true
	case <-time.After(d):
		return false
	}
}

// get performs GET path (with the admin token if token is set) and returns status and body;
// status 0 means no answer.
func (p *apiProc) get(path, token string) (int, []byte) {
	req, _ := http.NewRequest(http.MethodGet, p.base+path, nil)
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

// metric returns the sum of every series of the Prometheus metric name on /metrics whose
// labels contain match (all series when match is empty).
func (p *apiProc) metric(t *testing.T, name, match string) float64 {
	t.Helper()
	status, body := p.get("/metrics", "")
	if status != http.StatusOK {
		t.Fatalf("%s GET /metrics = %d", p.name, status)
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

// errorLines returns the API's log lines at level ERROR: each 500 logs one.
func (p *apiProc) errorLines() []string {
	var out []string
	for line := range strings.Lines(p.log.String()) {
		if strings.Contains(line, `"level":"ERROR"`) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return out
}

// exitCode is the exit status of a finished process, -1 if it died of a signal.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 0
}
