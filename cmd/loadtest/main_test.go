package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/seckill/seckill/internal/buildinfo"
)

// TestMain lets the test binary stand in for the program when the harness starts its own
// executable as a bare gin baseline server.
func TestMain(m *testing.M) {
	if os.Getenv(bareGinEnv) != "" {
		if err := serveBareGin(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	err := run(context.Background(), []string{"loadtest", "-version"}, func(string) string { return "" }, &out, io.Discard)
	if got := exitCode(err); got != exitOK {
		t.Fatalf("loadtest -version: exit %d (%v)", got, err)
	}
	if got, want := out.String(), "loadtest "+buildinfo.Read().String()+"\n"; got != want {
		t.Fatalf("loadtest -version printed %q, want %q", got, want)
	}
}
