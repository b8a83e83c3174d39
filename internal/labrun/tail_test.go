package labrun

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/history"
)

// TestTailFollowsTheHolder: the pause's view of the lock history, read as it grows, a line
// possibly cut mid-write. A process that was granted the lock on the key and read a stock
// of 17 is thinking; once its write is recorded it is not; a read of 0 (sold out), another
// key's operations and the runner's faults do not count.
func TestTailFollowsTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.jsonl")
	f, err := history.CreateLockFile(path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	now, v17, v0 := time.Now(), 17, 0
	op := func(p, kind, key string, value *int) history.LockOp {
		return history.LockOp{Process: p, Kind: kind, Key: key, Invoke: now, Complete: now, Outcome: history.OK, Value: value}
	}
	tl := newTail(path, "k")
	if err := tl.poll(); err != nil || tl.thinking(1) {
		t.Fatalf("before anything is recorded: thinking %v, %v", tl.thinking(1), err)
	}
	f.Record(op("1", history.Grant, "k", nil))
	f.Record(op("1", history.Read, "k", &v17))
	f.Record(op("2", history.Read, "other", &v17))
	f.Record(op("2", history.Read, "k", &v0))
	if err := tl.poll(); err != nil || !tl.thinking(1) || tl.thinking(2) {
		t.Fatalf("after 1 read 17 and 2 read 0: thinking %v and %v (%v); want 1 only", tl.thinking(1), tl.thinking(2), err)
	}
	f.Record(op("1", history.Fault, "k", nil))
	if err := tl.poll(); err != nil || !tl.thinking(1) {
		t.Fatalf("a fault of process 1 recorded: thinking %v (%v); want still true", tl.thinking(1), err)
	}
	// A write, appended in two pieces: the first poll sees half a line.
	w, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	line := `{"process":"1","kind":"write","key":"k","invoke":"2026-12-02T00:00:00Z","complete":"2026-12-02T00:00:00Z","outcome":"ok"}` + "\n"
	w.WriteString(line[:40])
	if err := tl.poll(); err != nil || !tl.thinking(1) {
		t.Fatalf("half a write's line: thinking %v (%v); want still true", tl.thinking(1), err)
	}
	w.WriteString(line[40:])
	if err := tl.poll(); err != nil || tl.thinking(1) {
		t.Fatalf("after the write: thinking %v (%v); want false", tl.thinking(1), err)
	}
}
