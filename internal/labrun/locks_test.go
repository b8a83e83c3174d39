package labrun_test

import (
	"slices"
	"testing"

	"github.com/seckill/seckill/internal/lab"
	"github.com/seckill/seckill/internal/labrun"
)

// TestLocksAreTheLabs: the runner's locks are internal/lab's, in its order (the runner names
// them so as to link none of them), and each has a result written down for every scenario.
func TestLocksAreTheLabs(t *testing.T) {
	t.Parallel()
	if !slices.Equal(labrun.Locks, lab.Names) {
		t.Errorf("labrun.Locks = %v, want lab.Names %v", labrun.Locks, lab.Names)
	}
	for _, l := range lab.Names {
		for _, s := range labrun.Scenarios {
			if labrun.Expected[l][s.Name] == "" {
				t.Errorf("no expected result for %s × %s", l, s.Name)
			}
		}
	}
}

// TestOwnerOfIsTheLabs: the runner reads a lock value's holder as internal/lab writes it.
func TestOwnerOfIsTheLabs(t *testing.T) {
	t.Parallel()
	for _, v := range []string{lab.Owner(4242) + "token", lab.Owner(7), "locked", ":x", ""} {
		wantPid, wantOK := lab.OwnerOf(v)
		if pid, ok := labrun.OwnerOf(v); pid != wantPid || ok != wantOK {
			t.Errorf("OwnerOf(%q) = %d, %v; internal/lab's %d, %v", v, pid, ok, wantPid, wantOK)
		}
	}
}
