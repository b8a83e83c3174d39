package dlock_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestSuiteOnCluster runs the whole suite again, in a child process of this
// test binary, against a three-master Redis Cluster of its own: every key the
// lock touches must live in the lock key's slot, and release notifications
// must cross nodes. The tests that need a single node (a TCP proxy in front
// of it) skip there.
func TestSuiteOnCluster(t *testing.T) {
	skipInChild(t)
	nodes := servers.StartRedisCluster(t, 3)
	runSuite(t, clusterEnv+"="+strings.Join(servers.Addrs(nodes), ","))
}

// TestSuiteOnRedlock runs the whole suite again, in a child process, with
// every Client a Redlock Client (over one node of its own, quorum 1): the
// Redlock code path must keep every promise of the single-node one. The
// cases that need several nodes are in redlock_test.go.
func TestSuiteOnRedlock(t *testing.T) {
	skipInChild(t)
	s := servers.StartRedis(t)
	runSuite(t, redlockEnv+"=1", "REDIS_ADDR="+s.Addr)
}

// skipInChild skips a topology test inside a child run, and with -short.
func skipInChild(t *testing.T) {
	t.Helper()
	if os.Getenv(clusterEnv) != "" || os.Getenv(redlockEnv) != "" {
		t.Skip("already a topology run")
	}
	if testing.Short() {
		t.Skip("runs the whole suite again; skipped with -short")
	}
}

// runSuite runs this test binary's tests, but the topology ones and the
// Redlock ones (which start servers of their own whatever the environment),
// with env added to the environment, and fails with their output if they
// fail.
func runSuite(t *testing.T, env ...string) {
	t.Helper()
	// One test at a time: the child shares 2 cores with the rest of `make test`,
	// and the suite's watchdog tests renew 200 ms locks.
	cmd := exec.Command(os.Args[0], "-test.run=^Test", "-test.skip=^TestSuiteOn|^TestRedlock",
		"-test.count=1", "-test.parallel=1", "-test.v")
	cmd.Env = append(os.Environ(), env...) // later duplicates win
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("suite with %v: %v\n%s", env, err, out)
	}
	var passed, skipped int
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		passed += boolInt(strings.HasPrefix(line, "--- PASS: Test"))
		skipped += boolInt(strings.HasPrefix(line, "--- SKIP: Test"))
	}
	t.Logf("suite with %v: %d tests and subtests passed, %d skipped", env, passed, skipped)
	if passed == 0 {
		t.Fatalf("suite with %v ran no test:\n%s", env, out)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
