package deploycheck_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime/debug"
	"strconv"
	"sync"
	"testing"
)

// memLimitChild, in the environment of this test binary run again by goMemLimit, makes
// TestGoMemLimitChild print the soft memory limit its runtime took from GOMEMLIMIT.
const memLimitChild = "DEPLOYCHECK_GOMEMLIMIT_CHILD"

func TestGoMemLimitChild(t *testing.T) {
	if os.Getenv(memLimitChild) == "" {
		return
	}
	fmt.Printf("memory limit %d\n", debug.SetMemoryLimit(-1))
}

var (
	memLimitLine = regexp.MustCompile(`memory limit (\d+)`)
	memLimits    sync.Map // GOMEMLIMIT value to its limit in bytes, or to the error
)

// goMemLimit is the soft memory limit, in bytes, that Go's runtime takes from GOMEMLIMIT=v:
// this test binary is run again with it. An error says the runtime refused it.
func goMemLimit(v string) (int64, error) {
	if got, ok := memLimits.Load(v); ok {
		if err, isErr := got.(error); isErr {
			return 0, err
		}
		return got.(int64), nil
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestGoMemLimitChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), memLimitChild+"=1", "GOMEMLIMIT="+v)
	out, err := cmd.CombinedOutput()
	m := memLimitLine.FindSubmatch(out)
	var result any
	if err != nil || m == nil {
		result = fmt.Errorf("Go's runtime refuses GOMEMLIMIT=%q: %v\n%s", v, err, out)
	} else {
		n, _ := strconv.ParseInt(string(m[1]), 10, 64)
		result = n
	}
	memLimits.Store(v, result)
	if err, isErr := result.(error); isErr {
		return 0, err
	}
	return result.(int64), nil
}

// TestGoMemLimit: the runtime reads plain bytes and the IEC suffixes, and refuses MB.
func TestGoMemLimit(t *testing.T) {
	for v, want := range map[string]int64{"512000000": 512_000_000, "512MiB": 512 << 20} {
		if got, err := goMemLimit(v); err != nil || got != want {
			t.Errorf("GOMEMLIMIT=%s: %d, %v; want %d", v, got, err, want)
		}
	}
	if got, err := goMemLimit("512MB"); err == nil {
		t.Errorf("GOMEMLIMIT=512MB: %d, want the runtime to refuse it", got)
	}
}
