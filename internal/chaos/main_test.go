//go:build linux

package chaos_test

import (
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// faultTest is how every fault test begins: it skips the test under -short (it starts
// processes and servers), runs it in parallel with the others, and returns its timeline.
func faultTest(t *testing.T) func(format string, args ...any) {
	t.Helper()
	testenv.SkipShort(t, "API processes and servers (a fault test)")
	t.Parallel()
	return timeline(t)
}

// timeline returns a function that logs what happened with the time since timeline was
// called, so a fault test's log reads as a sequence of events.
func timeline(t *testing.T) func(format string, args ...any) {
	start := time.Now()
	return func(format string, args ...any) {
		t.Helper()
		t.Logf("+%.2fs "+format, append([]any{time.Since(start).Seconds()}, args...)...)
	}
}
