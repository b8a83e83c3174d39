package testenv

import (
	"testing"
	"time"
)

// Eventually polls cond every few milliseconds until it holds, failing the test with what
// after timeout. The timeout only bounds a hung test; nothing is asserted about speed.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for: %s", timeout, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// SkipShort skips the test under -short; starts says what it would start ("an etcd cluster
// of its own").
func SkipShort(t testing.TB, starts string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts " + starts + "; skipped with -short")
	}
}
