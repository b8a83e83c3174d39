//go:build linux

package chaos_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// build holds the API binary, built at most once per test binary by the first test that
// needs it, and removed by TestMain.
var build struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
	}
	os.Exit(code)
}

// apiBinary returns the path of cmd/api built for this run (with -race when the tests run
// with it, so a data race in the service under a fault shows up in the API's log).
func apiBinary(t *testing.T) string {
	t.Helper()
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "chaos-api-")
		if build.err != nil {
			return
		}
		build.bin = filepath.Join(build.dir, "api")
		args := []string{"build", "-o", build.bin}
		if raceEnabled {
			args = append(args, "-race")
		}
		cmd := exec.Command(goTool(), append(args, "github.com/seckill/seckill/cmd/api")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build ./cmd/api: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.bin
}

// goTool finds the go command: on PATH, else under GOROOT, else where make up installs it.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "/usr/local/go/bin/go"
}

// skipShort skips fault tests under -short: they start processes and servers.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("fault test: starts API processes and servers; skipped with -short")
	}
}

// waitFor polls cond every few milliseconds until it holds, failing the test with what
// after timeout. The timeout only bounds a hung test; nothing is asserted about speed.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for: %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// timeline returns a function that logs what happened with the time since timeline was
// called, so a fault test's log reads as a sequence of events.
func timeline(t *testing.T) func(format string, args ...any) {
	start := time.Now()
	return func(format string, args ...any) {
		t.Helper()
		t.Logf("+%.2fs "+format, append([]any{time.Since(start).Seconds()}, args...)...)
	}
}
