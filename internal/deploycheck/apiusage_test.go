package deploycheck_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// apiUsage is what `api -h` prints: every setting of cmd/api, with its variable and default.
// It is asked once per test binary.
var apiUsage struct {
	once sync.Once
	text string
}

func usageOfAPI(t *testing.T) string {
	t.Helper()
	bin := servers.BuildAPI(t)
	apiUsage.once.Do(func() {
		cmd := exec.Command(bin, "-h")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		out, _ := cmd.CombinedOutput() // -h exits 0 or 2 as flag.ErrHelp goes; the text is what counts
		apiUsage.text = string(out)
	})
	if !strings.Contains(apiUsage.text, "(env HTTP_ADDR)") {
		t.Fatalf("api -h: no usage with the settings' variables:\n%s", apiUsage.text)
	}
	return apiUsage.text
}

// apiDefault is the default cmd/api gives the setting read from variable name, as its usage
// message prints it ("1m0s", "20", ":8080"); the test fails if the usage names none.
func apiDefault(t *testing.T, name string) string {
	t.Helper()
	re := regexp.MustCompile(`\(env ` + regexp.QuoteMeta(name) + `[;)][^\n]*\(default "?([^")]*)"?\)\s*$`)
	for line := range strings.SplitSeq(usageOfAPI(t), "\n") {
		if m := re.FindStringSubmatch(line); m != nil {
			return m[1]
		}
	}
	t.Fatalf("api -h prints no default for %s", name)
	return ""
}

// variableName matches a setting's variable as the usage message writes it: DB_MAX_CONNS.
var variableName = regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`)

// apiVariables is every variable cmd/api's usage message names: each setting's, and each
// secret's _FILE form.
func apiVariables(t *testing.T) map[string]bool {
	t.Helper()
	known := map[string]bool{}
	for _, v := range variableName.FindAllString(usageOfAPI(t), -1) {
		known[v] = true
	}
	return known
}

func TestAPIUsageDerived(t *testing.T) {
	if got := apiDefault(t, "STARTUP_TIMEOUT"); got != "1m0s" {
		t.Errorf("STARTUP_TIMEOUT's default = %q, want 1m0s (cmd/api/config.go)", got)
	}
	if got := apiDefault(t, "HTTP_ADDR"); got != ":8080" {
		t.Errorf("HTTP_ADDR's default = %q, want :8080", got)
	}
	known := apiVariables(t)
	for _, v := range []string{"DB_MAX_CONNS", "ADMIN_TOKEN_FILE", "REDIS_PASSWORD"} {
		if !known[v] {
			t.Errorf("%s is not among the variables api -h names", v)
		}
	}
	if known["SHUTDOWN_DELAYS"] {
		t.Errorf("SHUTDOWN_DELAYS is among the variables api -h names")
	}
}
