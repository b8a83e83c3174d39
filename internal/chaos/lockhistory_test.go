//go:build linux

package chaos_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/inventory"
)

// lockHistories maps a test's full name to the lock history its API processes append to
// (LOCK_HISTORY): every grant, write, loss and release of a product lock of the dlock
// strategy, one JSON line each, all processes in one file.
var lockHistories sync.Map

// withLockHistory returns env with LOCK_HISTORY set to t's lock history, a file in t's temp
// directory made on first use. The directory outlives t's processes: it is made before
// them, so its removal comes after their cleanups.
func withLockHistory(t testing.TB, env map[string]string) map[string]string {
	t.Helper()
	path, ok := lockHistories.Load(t.Name())
	if !ok {
		path, _ = lockHistories.LoadOrStore(t.Name(), filepath.Join(t.TempDir(), "locks.jsonl"))
		t.Cleanup(func() { lockHistories.Delete(t.Name()) })
	}
	return withEnv(env, "LOCK_HISTORY", path.(string))
}

// lockHistoryOf is the lock history of the processes of t, or of the test that runs t.
func lockHistoryOf(t testing.TB) string {
	for name := t.Name(); name != ""; {
		if path, ok := lockHistories.Load(name); ok {
			return path.(string)
		}
		i := strings.LastIndex(name, "/")
		if i < 0 {
			break
		}
		name = name[:i]
	}
	return ""
}

// lockHistoryTimeout bounds the check of one sale's lock history.
const lockHistoryTimeout = 2 * time.Minute

// checkLockHistory checks the lock history of the sale's product, as the test's API
// processes recorded it, against a fenced mutex (internal/history's CheckLocks): a write
// committed under a grant must have been made while that grant held the lock, whatever the
// fault did to the holder. A sale of the dlock strategy must have some; the other strategies
// take no lock across processes, and record none. When the history is not linearizable,
// porcupine's page of it is written to SERVERS_LOGDIR (next to the processes' logs) if set,
// else to a new directory under $TMPDIR, and its path is in the failure.
func (s *sale) checkLockHistory(t *testing.T) {
	t.Helper()
	path := lockHistoryOf(s.t)
	if path == "" {
		return // processes started without one (not through startAPIs)
	}
	ops, err := history.ReadLockOps(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: lock history: %v", s.strategy, err)
		return
	}
	suffix := inventory.Keys{}.Lock(s.id) // ":{p:ID}:lock": one of the test's keys, whatever its prefix
	var mine []history.LockOp
	for _, op := range ops {
		if strings.HasSuffix(op.Key, suffix) {
			mine = append(mine, op)
		}
	}
	if len(mine) == 0 {
		if s.strategy == "dlock" {
			t.Errorf("%s: no lock operation recorded for product %d in %s", s.strategy, s.id, path)
		}
		return
	}
	res, err := history.CheckLocks(mine, lockHistoryTimeout, os.Getenv("SERVERS_LOGDIR"))
	t.Logf("%s: lock history %s", s.strategy, res)
	why, twoHolders := twoHoldersAllowed.Load(s)
	switch {
	case err != nil:
		t.Errorf("%s: lock history: %v", s.strategy, err)
	case res.OK():
	case !twoHolders:
		t.Errorf("%s: the lock history is %s: a write under a lock its grant no longer held (%s)", s.strategy, res.Verdict, res)
	case res.Verdict == history.Illegal:
		t.Logf("%s: two holders wrote under the lock, which this fault allows: %s; the fence must keep their writes in order", s.strategy, why)
		if bad := outOfFenceOrder(mine); bad != "" {
			t.Errorf("%s: %s", s.strategy, bad)
		}
	default:
		t.Errorf("%s: the lock history's check did not decide: %s", s.strategy, res)
	}
}

// twoHoldersAllowed holds the sales whose fault takes the lock from its holder without its
// knowing (a Redis clock step forward expires its key at once): a newer holder may be granted
// the lock while the older one still writes, the history is then illegal for the fenced
// mutex, and what must hold instead is the fence's promise (outOfFenceOrder). Sale -> why.
var twoHoldersAllowed sync.Map

// allowTwoHolders marks the sale's lock history as one its fault may make illegal, for the
// reason why: checkLockHistory then holds its writes to the fence's order.
func (s *sale) allowTwoHolders(why string) { twoHoldersAllowed.Store(s, why) }

// outOfFenceOrder describes the first committed write (ok) that completed before another
// began although its fence is larger: a write under an older fence that landed after a
// newer one, which the fence check in PostgreSQL exists to refuse; "" when there is none.
// Writes that overlap in time are not ordered by this, so it finds no false violation.
func outOfFenceOrder(ops []history.LockOp) string {
	var writes []history.LockOp
	for _, op := range ops {
		if op.Kind == history.Write && op.Outcome == history.OK {
			writes = append(writes, op)
		}
	}
	for _, a := range writes {
		for _, b := range writes {
			if a.Complete.Before(b.Invoke) && a.Fence > b.Fence {
				return fmt.Sprintf("a write under fence %d (%s, %s) committed after one under the newer fence %d (%s), which completed at %s before it began",
					b.Fence, b.Process, b.Invoke.Format(time.RFC3339Nano), a.Fence, a.Process, a.Complete.Format(time.RFC3339Nano))
			}
		}
	}
	return ""
}

// TestOutOfFenceOrder: a committed write under an older fence that began after a write under
// a newer one had completed is found; writes in fence order, refused writes and writes that
// overlap in time are not.
func TestOutOfFenceOrder(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	w := func(fence int64, from, to int, outcome string) history.LockOp {
		return history.LockOp{Process: "p", Kind: history.Write, Fence: fence, Invoke: at(from), Complete: at(to), Outcome: outcome}
	}
	for _, tc := range []struct {
		name string
		ops  []history.LockOp
		bad  bool
	}{
		{"in order", []history.LockOp{w(1, 0, 10, history.OK), w(2, 20, 30, history.OK), w(2, 40, 50, history.OK)}, false},
		{"older after newer", []history.LockOp{w(2, 0, 10, history.OK), w(1, 20, 30, history.OK)}, true},
		{"older after newer, refused", []history.LockOp{w(2, 0, 10, history.OK), w(1, 20, 30, history.Fail)}, false},
		{"overlapping", []history.LockOp{w(2, 0, 25, history.OK), w(1, 20, 30, history.OK)}, false},
	} {
		if got := outOfFenceOrder(tc.ops); (got != "") != tc.bad {
			t.Errorf("%s: %q, want a violation: %v", tc.name, got, tc.bad)
		}
	}
}
