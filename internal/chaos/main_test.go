//go:build linux

package chaos_test

import (
	"testing"
	"time"
)

// skipShort skips fault tests under -short: they start processes and servers.
func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("fault test: starts API processes and servers; skipped with -short")
	}
}

// waitFor polls cond every few milliseconds until it holds, failing the test with what
// after timeout. The timeout only bounds a hung test; nothing is asserted about speed.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for: %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
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
