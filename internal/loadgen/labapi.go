package loadgen

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// apiModule is the module whose cmd/api FindLabAPI builds from a checkout.
const apiModule = "module github.com/seckill/seckill\n"

// FindLabAPI returns labapi beside this executable, else builds one, with a cleanup func;
// its error says how to get one.
func FindLabAPI() (path string, cleanup func(), err error) {
	if exe, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(exe), "labapi")
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() {
			return beside, func() {}, nil
		}
	}
	root, rerr := moduleRoot()
	gobin, gerr := exec.LookPath("go")
	if err := errors.Join(rerr, gerr); err != nil {
		return "", nil, fmt.Errorf("no lab build of the API: build it with make build (bin/labapi, beside bin/loadtest) "+
			"or pass -api; a checkout and the go command could build it: %w", err)
	}
	dir, err := os.MkdirTemp("", "loadtest-labapi-")
	if err != nil {
		return "", nil, err
	}
	bin := filepath.Join(dir, "labapi")
	cmd := exec.Command(gobin, "build", "-tags", "lab", "-o", bin, "./cmd/api")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("go build -tags lab ./cmd/api: %w\n%s", err, out)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// moduleRoot is the directory of the seckill checkout that holds the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte(apiModule)) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("the working directory is in no checkout of github.com/seckill/seckill")
		}
		dir = parent
	}
}
