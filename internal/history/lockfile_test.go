package history_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/history"
)

// TestLockFile: two recorders (two processes) append to one file at once, each line whole
// and stamped with its process; ReadLockOps gives every operation back as recorded, skips a
// last line cut short (a process killed while writing it), and refuses a line that is not
// an operation.
func TestLockFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locks.jsonl")
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	const n = 500
	var wg sync.WaitGroup
	for _, proc := range []string{"a", "b"} {
		f, err := history.CreateLockFile(path, proc)
		if err != nil {
			t.Fatal(err)
		}
		for range 4 {
			wg.Go(func() {
				for i := range n {
					f.Record(history.LockOp{Kind: "write", Key: "k", Token: proc, Fence: int64(i + 1),
						Invoke: at, Complete: at.Add(time.Millisecond), Outcome: history.OK})
				}
			})
		}
		t.Cleanup(func() {
			if err := f.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	ops, err := history.ReadLockOps(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(ops), 2*4*n; got != want {
		t.Fatalf("%d ops, want %d", got, want)
	}
	for _, op := range ops {
		if op.Process != op.Token || op.Key != "k" || !op.Invoke.Equal(at) || !op.Complete.Equal(at.Add(time.Millisecond)) ||
			op.Outcome != history.OK || op.Fence < 1 {
			t.Fatalf("read back %+v", op)
		}
	}
	if got := len(history.OfKey(ops, "k")) + len(history.OfKey(ops, "other")); got != len(ops) {
		t.Errorf("OfKey: %d ops of k, want all %d", got, len(ops))
	}

	cut := filepath.Join(t.TempDir(), "cut.jsonl")
	if err := os.WriteFile(cut, []byte(`{"process":"a","kind":"grant","key":"k","token":"t","invoke":"2026-01-02T03:04:05Z","complete":"2026-01-02T03:04:05Z","outcome":"ok"}`+"\n"+`{"process":"a","ki`), 0o644); err != nil {
		t.Fatal(err)
	}
	if ops, err := history.ReadLockOps(cut); err != nil || len(ops) != 1 || ops[0].Kind != "grant" {
		t.Errorf("a history cut mid-line: %+v, %v; want its one whole op", ops, err)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte("not json\n{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := history.ReadLockOps(bad); err == nil {
		t.Error("a line that is not an operation was read")
	}
}

// BenchmarkLockFileRecord: what one recorded operation costs its caller (a JSON encoding and
// one write(2) to a file), from 8 goroutines at once.
func BenchmarkLockFileRecord(b *testing.B) {
	f, err := history.CreateLockFile(filepath.Join(b.TempDir(), "locks.jsonl"), "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	now := time.Now()
	op := history.LockOp{Kind: history.Write, Key: "seckill:{p:42}:lock", Token: "12345:ABCDEFGHIJKLMNOPQRSTUVWXYZ",
		Fence: 1_780_000_000_000_000, Invoke: now, Complete: now, Outcome: history.OK}
	b.ReportAllocs()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			f.Record(op)
		}
	})
}
