package main

import (
	"path/filepath"
	"testing"
)

// TestLockHistory: LOCK_HISTORY (or -lock-history) names the lock history's file; the lab
// build opens it (internal/labapi's TestOpenLockHistory), the production build refuses to
// start with it (TestProductionRefusesLockHistory).
func TestLockHistory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "locks.jsonl")
	checkSetting(t, "LOCK_HISTORY", path, true, func(cfg config) string { return cfg.lockHistory })
}
