package labapi_test

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/labapi"
)

// TestOpenLockHistory: LOCK_HISTORY empty, recording is off (a nil recorder, not a nil
// *LockFile in an interface); set, the file is created and each operation is stamped with the
// process's pid; a path that cannot be opened is an error.
func TestOpenLockHistory(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "locks.jsonl")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if rec, done, err := labapi.OpenLockHistory("", log); rec != nil || err != nil {
		t.Fatalf("empty LOCK_HISTORY: recorder %v, err %v; want none", rec, err)
	} else {
		done()
	}
	rec, done, err := labapi.OpenLockHistory(path, log)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	rec.Record(history.LockOp{Kind: history.Grant, Key: "k", Token: "t", Invoke: now, Complete: now, Outcome: history.OK})
	done()
	ops, err := history.ReadLockOps(path)
	if err != nil || len(ops) != 1 || ops[0].Process != strconv.Itoa(os.Getpid()) {
		t.Fatalf("recorded %+v, %v; want one grant by pid %d", ops, err, os.Getpid())
	}
	if _, _, err := labapi.OpenLockHistory(filepath.Join(path, "not-a-dir", "x"), log); err == nil {
		t.Error("a path that cannot be created was accepted")
	}
}
