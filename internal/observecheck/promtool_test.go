package observecheck_test

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// deploy is the repository's deploy directory, from this package's.
const deploy = "../../deploy"

// TestPromtool: promtool accepts Prometheus's configuration and the rules, and the rules'
// unit tests (rules/*_test.yml) pass.
func TestPromtool(t *testing.T) {
	t.Parallel()
	promtool := servers.PromtoolBin(t)
	rules := glob(t, filepath.Join(deploy, "prometheus/rules/*.rules.yml"))
	tests := glob(t, filepath.Join(deploy, "prometheus/rules/*_test.yml"))
	for _, args := range [][]string{
		{"check", "config", "--syntax-only", filepath.Join(deploy, "prometheus/prometheus.yml")},
		append([]string{"check", "rules"}, rules...),
		append([]string{"test", "rules"}, tests...),
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

// glob returns the files matching pattern, and fails the test when there are none.
func glob(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no file matches %s (%v)", pattern, err)
	}
	return files
}
