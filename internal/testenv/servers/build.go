package servers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// apiPackage is what BuildAPI builds.
const apiPackage = "github.com/seckill/seckill/cmd/api"

// build holds cmd/api, built at most once per test binary by the first test that needs it.
var build struct {
	once sync.Once
	file *os.File // the binary, kept open (and from the collector): its directory is removed
	path string   // /proc/self/fd/N of file
	err  error
}

// BuildAPI returns the path of cmd/api built for this test binary, or fails the test. The
// first call builds it (with -race when the test binary runs with the race detector, so that
// a data race in the service shows up in the API's log); later calls return the same path.
// It is safe for concurrent use.
//
// Nothing is left behind, whatever way the test binary ends, and no TestMain is needed: the
// binary is built into a temporary directory that is removed at once, and the path names
// this test binary's open file descriptor of it (/proc/self/fd/N), which the kernel closes
// when the test binary exits. The path is valid in this process only: start it with
// exec.Command here, never hand it to another process.
func BuildAPI(t T) string {
	t.Helper()
	build.once.Do(func() {
		build.file, build.err = buildAPI()
		if build.err == nil {
			build.path = fmt.Sprintf("/proc/self/fd/%d", build.file.Fd())
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}

// buildAPI builds apiPackage into a temporary directory, opens the binary, and removes the
// directory.
func buildAPI() (*os.File, error) {
	dir, err := os.MkdirTemp("", "servers-api-")
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", apiPackage, err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "api")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	out, err := exec.Command(goTool(), append(args, apiPackage)...).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("go build %s: %w\n%s", apiPackage, err, out)
	}
	f, err := os.Open(bin)
	if err != nil {
		return nil, fmt.Errorf("open the built %s: %w", apiPackage, err)
	}
	return f, nil
}

// goTool finds the go command: on PATH (go test puts its own first), else under GOROOT,
// else where `make up` installs it.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "/usr/local/go/bin/go"
}
