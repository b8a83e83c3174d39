package boundarycheck_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// testTooling matches the packages no shipped binary may link: package testing, the tests'
// helpers (internal/testenv/...), and chromedp, which only the browser tests need.
var testTooling = regexp.MustCompile(`^testing$|/internal/testenv(/|$)|github\.com/chromedp/`)

// TestShippedBinariesLinkNoTestTooling: cmd/api and cmd/loadtest (the lab's launcher
// included) link nothing of package testing, of internal/testenv, or of chromedp.
func TestShippedBinariesLinkNoTestTooling(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps",
		"github.com/seckill/seckill/cmd/api", "github.com/seckill/seckill/cmd/loadtest").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	var bad []string
	for _, pkg := range strings.Fields(string(out)) {
		if testTooling.MatchString(pkg) {
			bad = append(bad, pkg)
		}
	}
	if len(bad) > 0 {
		t.Errorf("shipped binaries link %d test-only packages: %s", len(bad), strings.Join(bad, " "))
	}
}
