package main

import (
	"fmt"
	"os"
	"testing"
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
