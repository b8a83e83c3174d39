package history_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/history"
)

// t0 is the start of every hand-made history; at(ms) is ms milliseconds after it.
var t0 = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// lop is a lock operation by process on key "k", from invoke to complete (ms; complete < 0:
// no completion).
func lop(process, kind, token, outcome string, invoke, complete int) history.LockOp {
	op := history.LockOp{Process: process, Kind: kind, Key: "k", Token: token, Invoke: at(invoke), Outcome: outcome}
	if complete >= 0 {
		op.Complete = at(complete)
	}
	return op
}

func TestCheckLocks(t *testing.T) {
	const G, R, L, W = history.Grant, history.Release, history.Loss, history.Write
	const ok, fail, unknown = history.OK, history.Fail, history.Unknown
	for _, tt := range []struct {
		name string
		ops  []history.LockOp
		want history.Verdict
	}{
		{"one holder after another", []history.LockOp{
			lop("a", G, "ta", ok, 0, 1), lop("a", W, "ta", ok, 2, 3), lop("a", R, "ta", ok, 4, 5),
			lop("b", G, "tb", ok, 6, 7), lop("b", W, "tb", ok, 8, 9), lop("b", R, "tb", ok, 10, 11),
		}, history.Linearizable},
		{"a paused holder writes after the next grant", []history.LockOp{
			lop("a", G, "ta", ok, 0, 1), lop("b", G, "tb", ok, 5, 6), lop("a", W, "ta", ok, 10, 11),
		}, history.Illegal},
		{"the paused holder's write refused by its fence", []history.LockOp{
			lop("a", G, "ta", ok, 0, 1), lop("b", G, "tb", ok, 5, 6), lop("b", W, "tb", ok, 7, 8),
			lop("a", W, "ta", fail, 10, 11),
		}, history.Linearizable},
		{"a write overlapping the next grant", []history.LockOp{
			lop("a", G, "ta", ok, 0, 1), lop("a", W, "ta", ok, 4, 12), lop("b", G, "tb", ok, 5, 6),
		}, history.Linearizable},
		{"a grant that may have happened, after the write", []history.LockOp{
			lop("a", G, "ta", ok, 0, 1), lop("b", G, "tb", unknown, 5, -1), lop("a", W, "ta", ok, 10, 11),
		}, history.Linearizable},
		{"a grant that may have happened, before its own write", []history.LockOp{
			lop("a", G, "ta", ok, 0, 1), lop("b", G, "tb", unknown, 5, -1), lop("b", W, "tb", ok, 10, 11),
		}, history.Linearizable},
		{"two holders write, one grant unknown", []history.LockOp{
			lop("a", G, "ta", ok, 0, 1), lop("b", G, "tb", unknown, 2, -1), lop("b", W, "tb", ok, 5, 6),
			lop("a", W, "ta", ok, 10, 11),
		}, history.Illegal},
		{"a write with no lock", []history.LockOp{lop("a", W, "", ok, 0, 1)}, history.Illegal},
		{"a write after its own release", []history.LockOp{
			lop("a", G, "ta", ok, 0, 1), lop("a", R, "ta", ok, 2, 3), lop("a", W, "ta", ok, 4, 5),
		}, history.Illegal},
		{"a late release by a former holder changes nothing", []history.LockOp{
			lop("a", G, "ta", ok, 0, 1), lop("b", G, "tb", ok, 2, 3), lop("a", R, "ta", ok, 4, 5),
			lop("b", W, "tb", ok, 6, 7),
		}, history.Linearizable},
		{"a loss changes nothing; unknown writes are left out", []history.LockOp{
			lop("a", G, "ta", ok, 0, 1), lop("a", L, "ta", ok, 2, 2), lop("b", G, "tb", ok, 3, 4),
			lop("a", W, "ta", unknown, 5, -1), lop("b", W, "tb", ok, 6, 7),
		}, history.Linearizable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := history.CheckLocks(tt.ops, 10*time.Second, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Verdict; got != tt.want {
				t.Fatalf("verdict = %s, want %s (%s)", got, tt.want, res)
			}
			if got, want := res.Visualization != "", tt.want != history.Linearizable; got != want {
				t.Fatalf("visualization written = %v, want %v (%s)", got, want, res)
			}
			if res.Visualization != "" {
				page, err := os.ReadFile(res.Visualization)
				if err != nil || !strings.Contains(string(page), "<html") {
					t.Fatalf("visualization %s: %v, %d bytes", res.Visualization, err, len(page))
				}
			}
		})
	}
}

// TestCheckLocksPartitionsByKey: two keys, each with its own holder, writing at once.
func TestCheckLocksPartitionsByKey(t *testing.T) {
	ops := []history.LockOp{
		lop("a", history.Grant, "ta", history.OK, 0, 1), lop("b", history.Grant, "tb", history.OK, 0, 1),
		lop("a", history.Write, "ta", history.OK, 2, 3), lop("b", history.Write, "tb", history.OK, 2, 3),
	}
	ops[1].Key, ops[3].Key = "k2", "k2"
	res, err := history.CheckLocks(ops, 10*time.Second, t.TempDir())
	if err != nil || !res.OK() || res.Partitions != 2 {
		t.Fatalf("CheckLocks = %s, %v; want linearizable in 2 partitions", res, err)
	}
}

func TestCheckLocksRefusesMalformed(t *testing.T) {
	for _, op := range []history.LockOp{
		lop("a", "steal", "ta", history.OK, 0, 1),
		lop("a", history.Grant, "ta", "maybe", 0, 1),
		lop("a", history.Grant, "ta", history.OK, 5, 1),
		lop("a", history.Grant, "ta", history.OK, 0, -1),
	} {
		if _, err := history.CheckLocks([]history.LockOp{op}, time.Second, t.TempDir()); err == nil {
			t.Errorf("CheckLocks(%+v) = nil error, want one", op)
		}
	}
}

// TestCheckLocksLeaseRunsOut mirrors the lab's lease × pause under load (docs/lab.md#lock-histories):
// holder a's 500 ms lease runs out at 501 ms and b is granted the lock at 510-512 ms. A write a
// sends after b's grant completed is refused (the negative control: the untrue history); a
// write a sent before the lease ran out, whose COMMIT came after b's grant and b's read of the
// stock it had not yet decremented, is linearizable: the model places it at its start, while a
// still held the lock. That second history oversold a unit (b's write overwrote 9 with 9, a
// lost decrement that Value and Before show), which the lock model, without reads, cannot see.
func TestCheckLocksLeaseRunsOut(t *testing.T) {
	const G, R, W, Rd = history.Grant, history.Release, history.Write, history.Read
	const ok = history.OK
	stock := func(op history.LockOp, value, before int) history.LockOp {
		op.Value = &value
		if op.Kind == W {
			op.Before = &before
		}
		return op
	}
	for _, tt := range []struct {
		name string
		ops  []history.LockOp
		want history.Verdict
	}{
		{"the expired holder writes after the next grant", []history.LockOp{
			lop("a", G, "ta", ok, 0, 1), stock(lop("a", Rd, "ta", ok, 2, 3), 10, 0),
			lop("b", G, "tb", ok, 510, 512), stock(lop("b", Rd, "tb", ok, 513, 514), 10, 0),
			stock(lop("a", W, "ta", ok, 600, 620), 9, 10), lop("a", R, "ta", ok, 621, 622),
			stock(lop("b", W, "tb", ok, 630, 640), 9, 9), lop("b", R, "tb", ok, 641, 642),
		}, history.Illegal},
		{"the expired holder's write began before the next grant", []history.LockOp{
			lop("a", G, "ta", ok, 0, 1), stock(lop("a", Rd, "ta", ok, 2, 3), 10, 0),
			stock(lop("a", W, "ta", ok, 450, 700), 9, 10),
			lop("b", G, "tb", ok, 510, 512), stock(lop("b", Rd, "tb", ok, 513, 514), 10, 0),
			stock(lop("b", W, "tb", ok, 620, 710), 9, 9), lop("a", R, "ta", ok, 701, 702),
			lop("b", R, "tb", ok, 711, 712),
		}, history.Linearizable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := history.CheckLocks(tt.ops, 10*time.Second, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tt.want {
				t.Fatalf("verdict = %s, want %s (%s)", res.Verdict, tt.want, res)
			}
		})
	}
}
