package testenv_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// missingChild names, in the environment of this test binary run again by runMissing, what
// TestMissingChild does: a test that cannot run here, in one of the ways tests find out.
const missingChild = "TESTENV_MISSING_CHILD"

// TestMissingChild does nothing unless run by runMissing: then it is a test whose server or
// binary is missing.
func TestMissingChild(t *testing.T) {
	switch os.Getenv(missingChild) {
	case "database": // DATABASE_URL unset
		testenv.DatabaseURL(t)
	case "postgres": // a launcher that cannot run here (PG_BINDIR names a directory without PostgreSQL)
		servers.StartPostgres(t)
	case "short": // a fault test under -short
		testenv.SkipShort(t, "a PostgreSQL cluster of its own")
		servers.StartPostgres(t)
	default:
		return
	}
	t.Log("ran, though it cannot run here")
}

// runMissing runs TestMissingChild in a new process of this test binary, as what with the
// variables env, and returns its output and whether it failed.
func runMissing(t *testing.T, what string, args []string, env ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestMissingChild$", "-test.v", "-test.count=1"}, args...)...)
	// Later values win: the parent's own SECKILL_REQUIRE_ALL (CI's) is overridden.
	cmd.Env = append(os.Environ(), append([]string{missingChild + "=" + what, "DATABASE_URL=", "PG_BINDIR=" + t.TempDir(),
		"SECKILL_REQUIRE_ALL="}, env...)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("run the child: %v\n%s", err, out)
	}
	return string(out), err != nil
}

// TestMissingFailsWhenRequired: a test whose server variable, binary or privilege is missing
// skips, as a plain `go test ./...` wants, unless SECKILL_REQUIRE_ALL is true (CI): then it
// fails, saying what is missing. A -short skip stays a skip, and a SECKILL_REQUIRE_ALL that
// is not a boolean fails, naming it.
func TestMissingFailsWhenRequired(t *testing.T) {
	testenv.SkipShort(t, "this test binary, seven times")
	t.Parallel()
	for _, tt := range []struct {
		what   string
		args   []string
		env    []string
		failed bool
		want   []string
	}{
		{"database", nil, nil, false, []string{"--- SKIP", "DATABASE_URL is not set"}},
		{"database", nil, []string{"SECKILL_REQUIRE_ALL=1"}, true, []string{"--- FAIL", "DATABASE_URL is not set", "SECKILL_REQUIRE_ALL=1"}},
		{"postgres", nil, nil, false, []string{"--- SKIP", "PostgreSQL server binaries (initdb, postgres) not found"}},
		{"postgres", nil, []string{"SECKILL_REQUIRE_ALL=true"}, true, []string{"--- FAIL", "PostgreSQL server binaries (initdb, postgres) not found"}},
		{"postgres", nil, []string{"SECKILL_REQUIRE_ALL=0"}, false, []string{"--- SKIP"}},
		{"postgres", nil, []string{"SECKILL_REQUIRE_ALL=yes"}, true, []string{"--- FAIL", `SECKILL_REQUIRE_ALL "yes"`}},
		{"short", []string{"-test.short"}, []string{"SECKILL_REQUIRE_ALL=1"}, false, []string{"--- SKIP", "skipped with -short"}},
	} {
		out, failed := runMissing(t, tt.what, tt.args, tt.env...)
		if failed != tt.failed || strings.Contains(out, "ran, though it cannot run here") {
			t.Errorf("%s %q %q: failed %v, want %v:\n%s", tt.what, tt.args, tt.env, failed, tt.failed, out)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s %q %q: the output lacks %q:\n%s", tt.what, tt.args, tt.env, w, out)
			}
		}
	}
}
