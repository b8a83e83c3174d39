package deploycheck_test

import (
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// repoRoot is where compose.yaml and deploy/ are, seen from this package's directory.
const repoRoot = "../.."

// closeMargin is how long the API may take, once its HTTP server has drained, to stop its
// background work: internal/app's Close waits up to 5 s for its listeners, then stops the
// queue consumers and releases the locks. A grace period must leave it this much too.
const closeMargin = 5 * time.Second

var wantAtLeast = regexp.MustCompile(`WRITE_TIMEOUT "1ns": want at least (\S+),`)

// apiDrain is the longest a SIGTERMed API configured with env (its variables as a container
// gets them) goes on running before it exits: SHUTDOWN_DELAY, then SHUTDOWN_TIMEOUT, whose
// default is WRITE_TIMEOUT, whose default cmd/api derives from PURCHASE_TIMEOUT. The derived
// value is cmd/api's own: the API is run with WRITE_TIMEOUT=1ns, and its configuration error
// names the least write timeout it accepts, which is its default. Nothing is hard-coded here
// but the close margin.
func apiDrain(t *testing.T, env map[string]string) time.Duration {
	t.Helper()
	parse := func(name string) (time.Duration, bool) {
		v, ok := env[name]
		if !ok || v == "" {
			return 0, false
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s %q: %v", name, v, err)
		}
		return d, true
	}
	delay, _ := parse("SHUTDOWN_DELAY")
	shutdown, ok := parse("SHUTDOWN_TIMEOUT")
	if !ok {
		shutdown, ok = parse("WRITE_TIMEOUT")
	}
	if !ok {
		shutdown = derivedWriteTimeout(t, env["PURCHASE_TIMEOUT"])
	}
	return delay + shutdown + closeMargin
}

// derivedWriteTimeout asks cmd/api for WRITE_TIMEOUT's default with this PURCHASE_TIMEOUT
// (empty: its default).
func derivedWriteTimeout(t *testing.T, purchaseTimeout string) time.Duration {
	t.Helper()
	cmd := exec.Command(servers.BuildAPI(t), "-write-timeout", "1ns")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	if purchaseTimeout != "" {
		cmd.Env = append(cmd.Env, "PURCHASE_TIMEOUT="+purchaseTimeout)
	}
	out, err := cmd.CombinedOutput()
	m := wantAtLeast.FindSubmatch(out)
	if err == nil || m == nil {
		t.Fatalf("api -write-timeout 1ns: want a configuration error naming the least write timeout; got err %v, output:\n%s", err, out)
	}
	d, err := time.ParseDuration(string(m[1]))
	if err != nil {
		t.Fatalf("api's least write timeout %q: %v", m[1], err)
	}
	return d
}

func TestAPIDrainDerived(t *testing.T) {
	// The defaults: WRITE_TIMEOUT is what a purchase with PURCHASE_TIMEOUT 10s needs.
	d := derivedWriteTimeout(t, "")
	if d < 10*time.Second {
		t.Fatalf("derived WRITE_TIMEOUT = %s, want more than PURCHASE_TIMEOUT's default 10s", d)
	}
	// A longer purchase deadline makes a longer write timeout, by as much.
	if got, want := derivedWriteTimeout(t, "12s"), d+2*time.Second; got != want {
		t.Fatalf("derived WRITE_TIMEOUT with PURCHASE_TIMEOUT=12s = %s, want %s", got, want)
	}
	if got, want := apiDrain(t, map[string]string{"SHUTDOWN_DELAY": "3s", "SHUTDOWN_TIMEOUT": "20s"}), 28*time.Second; got != want {
		t.Fatalf("drain = %s, want %s", got, want)
	}
}
