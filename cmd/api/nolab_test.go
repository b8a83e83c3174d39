//go:build !lab

package main

import (
	"errors"
	"io"
	"log/slog"
	"testing"
)

// TestProductionRefusesLockHistory: the production build, which links no lock history, refuses
// LOCK_HISTORY with an error that names the lab build, and plugs nothing in without it.
func TestProductionRefusesLockHistory(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, _, err := labPlug(config{lockHistory: "locks.jsonl"}, log); !errors.Is(err, errNoLab) {
		t.Errorf("LOCK_HISTORY in the production build: %v, want errNoLab", err)
	}
	plug, done, err := labPlug(config{}, log)
	if err != nil || plug != nil {
		t.Fatalf("production build: plug %v, err %v; want none", plug != nil, err)
	}
	done()
}
