package servers

import (
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/launch"
)

// PrometheusBin returns the path of Debian's prometheus, or skips the test.
func PrometheusBin(t testing.TB) string {
	return lookBin(t, "prometheus", "prometheus not found: this test starts a Prometheus of its own (`make up` installs Debian's prometheus)")
}

// PromtoolBin returns the path of promtool (Debian's prometheus package), or skips the test.
func PromtoolBin(t testing.TB) string {
	return lookBin(t, "promtool", "promtool not found: `make up` installs Debian's prometheus, which has it")
}

// Prometheus is a prometheus server of the test's own (StartPrometheus), its data in a
// temporary directory. It is stopped when the test ends. Its fields may be read from any
// goroutine.
type Prometheus struct {
	URL string  // http://127.0.0.1:port: the HTTP API is under URL + "/api/v1/"
	Dir string  // the directory of its configuration file (files given to StartPrometheus)
	Log *Buffer // what it printed

	proc *process
}

// Reload makes the server read its configuration and rule files again (SIGHUP), as an
// operator's reload does; it returns at once. A test that rewrites a rule file in Dir calls it.
func (p *Prometheus) Reload() error { return p.proc.signal(syscall.SIGHUP) }

// StartPrometheus writes files (name: content; "prometheus.yml" among them, whose relative
// paths, rule_files among them, are relative to that directory) into a directory of the
// test's own, starts prometheus on it on a free loopback port, and waits up to 20 s until it
// is ready (GET /-/ready answers 200). The test fails if the configuration is refused. The
// server is stopped, and its data removed, when the test ends; its log's tail is printed if
// the test failed.
func StartPrometheus(t testing.TB, files map[string]string) *Prometheus {
	t.Helper()
	bin := PrometheusBin(t)
	dir := t.TempDir()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for try := 1; ; try++ {
		addr := FreeAddr(t)
		p := &Prometheus{URL: "http://" + addr, Dir: dir, Log: &Buffer{}}
		cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
			"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr, "--log.level=warn")
		cmd.Dir = dir
		proc, err := startProcess(cmd, p.Log)
		if err != nil {
			t.Fatalf("start prometheus: %v", err)
		}
		p.proc = proc
		t.Cleanup(func() {
			proc.stop(syscall.SIGTERM, 10*time.Second)
			if t.Failed() {
				t.Logf("prometheus (%s) log, last lines:\n%s", p.URL, p.Log.Tail(20))
			}
		})
		err = p.await(proc)
		if err == nil {
			return p
		}
		if try < 3 && errors.Is(err, errPromPortTaken) { // another test binary bound the port meanwhile
			continue
		}
		t.Fatalf("prometheus on %s: %v; log:\n%s", addr, err, p.Log.Tail(20))
	}
}

// errPromPortTaken: another process bound the port FreeAddr found free before prometheus did.
var errPromPortTaken = errors.New("its port was taken")

// await waits up to 20 s until the server is ready.
func (p *Prometheus) await(proc *process) error {
	client := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := client.Get(p.URL + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if proc.exited() {
			if strings.Contains(p.Log.String(), "address already in use") {
				return errPromPortTaken
			}
			return errors.New("exited before it was ready")
		}
	}
	return errors.New("not ready within 20s")
}

// lookBin returns the path of the program name (see launch.LookBin), or skips the test.
func lookBin(t testing.TB, name, why string) string {
	t.Helper()
	path, err := launch.LookBin(name, why)
	check(t, err)
	return path
}
