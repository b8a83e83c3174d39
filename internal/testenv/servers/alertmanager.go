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

	"github.com/seckill/seckill/internal/testenv/missing"
)

// AlertmanagerBin returns the path of Alertmanager (Debian's prometheus-alertmanager, or an
// alertmanager on PATH), or skips the test (see missing.Skip).
func AlertmanagerBin(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"prometheus-alertmanager", "/usr/bin/prometheus-alertmanager", "alertmanager"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	missing.Skip(t, "prometheus-alertmanager not found: this test starts an Alertmanager of its own (`make up` installs Debian's prometheus-alertmanager)")
	return ""
}

// Alertmanager is an Alertmanager of the test's own (StartAlertmanager), its state in a
// temporary directory, stopped when the test ends. Its fields may be read from any goroutine.
type Alertmanager struct {
	URL  string  // http://127.0.0.1:port
	Addr string  // 127.0.0.1:port, a target of Prometheus's alerting block
	Log  *Buffer // what it printed
}

// StartAlertmanager writes config as its configuration file, starts Alertmanager on a free
// loopback port, clustering off, and waits up to 20 s until it is ready (GET /-/ready answers
// 200). The test fails if the configuration is refused. The server is stopped when the test
// ends; its log's tail is printed if the test failed.
func StartAlertmanager(t testing.TB, config string) *Alertmanager {
	t.Helper()
	bin := AlertmanagerBin(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(file, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	for try := 1; ; try++ {
		addr := FreeAddr(t)
		am := &Alertmanager{URL: "http://" + addr, Addr: addr, Log: &Buffer{}}
		cmd := exec.Command(bin, "--config.file="+file, "--storage.path="+filepath.Join(dir, "data"),
			"--web.listen-address="+addr, "--cluster.listen-address=", "--log.level=warn")
		proc, err := startProcess(cmd, am.Log)
		if err != nil {
			t.Fatalf("start alertmanager: %v", err)
		}
		t.Cleanup(func() {
			proc.stop(syscall.SIGTERM, 10*time.Second)
			if t.Failed() {
				t.Logf("alertmanager (%s) log, last lines:\n%s", am.URL, am.Log.Tail(20))
			}
		})
		err = am.await(proc)
		if err == nil {
			return am
		}
		if try < 3 && strings.Contains(am.Log.String(), "address already in use") {
			continue
		}
		t.Fatalf("alertmanager on %s: %v; log:\n%s", addr, err, am.Log.Tail(20))
	}
}

// await waits up to 20 s until the server is ready.
func (am *Alertmanager) await(proc *process) error {
	client := &http.Client{Timeout: time.Second}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := client.Get(am.URL + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if proc.exited() {
			return errors.New("exited before it was ready")
		}
	}
	return errors.New("not ready within 20s")
}
