package main

import (
	"context"
	"fmt"
	"io"

	"github.com/seckill/seckill/internal/buildinfo"
)

const versionHelp = `Print the build of this binary: version, VCS revision and time, whether the tree was
modified, and the Go version. loadtest -version does the same.`

// cmdVersion prints the build.
func cmdVersion(_ context.Context, args []string, _ func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "", versionHelp, stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "loadtest", buildinfo.Read())
	return nil
}
