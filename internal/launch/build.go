package launch

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// apiPackage is what BuildAPI builds.
const apiPackage = "github.com/seckill/seckill/cmd/api"

// apiTags builds the lab build of cmd/api (its lab.go): the tests and the lab sell the
// teaching strategies, take think_ms and record lock histories.
const apiTags = "lab"

// build holds cmd/api, built at most once per process by the first caller that needs it.
var build struct {
	once sync.Once
	file *os.File // the binary, kept open (and from the collector): its directory is removed
	path string   // /proc/self/fd/N of file
	err  error
}

// BuildAPI returns the path of cmd/api's lab build (-tags lab) built for this process (with -race
// when this binary has the race detector), building it on the first call; later calls return the
// same path, or the same error. It needs the go command and the module's source, and the path is
// valid in this process only (docs/testing.md). It is safe for concurrent use.
func BuildAPI() (string, error) {
	build.once.Do(func() {
		build.file, build.err = buildAPI()
		if build.err == nil {
			build.path = fmt.Sprintf("/proc/self/fd/%d", build.file.Fd())
		}
	})
	return build.path, build.err
}

// buildAPI builds apiPackage into a temporary directory, opens the binary, and removes the
// directory.
func buildAPI() (*os.File, error) {
	dir, err := os.MkdirTemp("", "launch-api-")
	if err != nil {
		return nil, fmt.Errorf("build %s: %w", apiPackage, err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "api")
	args := []string{"build", "-tags", apiTags, "-o", bin}
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

// goTool finds the go command: on PATH (go test and go run put their own first), else under GOROOT,
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
