package timeline_test

import (
	"testing"
	"time"

	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/timeline"
)

// rec writes a history as the processes record it: ops of one key, times in ms from t0.
type rec struct {
	t0  time.Time
	ops []history.LockOp
}

func (r *rec) at(ms float64) time.Time {
	return r.t0.Add(time.Duration(ms * float64(time.Millisecond)))
}

func (r *rec) op(p, kind, token string, fence int64, from, to float64, outcome string) *history.LockOp {
	r.ops = append(r.ops, history.LockOp{Process: p, Kind: kind, Key: "k", Token: token, Fence: fence,
		Invoke: r.at(from), Complete: r.at(to), Outcome: outcome})
	return &r.ops[len(r.ops)-1]
}

func (r *rec) read(p, token string, fence int64, at float64, v int) {
	r.op(p, history.Read, token, fence, at, at+1, history.OK).Value = &v
}

func (r *rec) write(p, token string, fence int64, at float64, v, before int) {
	o := r.op(p, history.Write, token, fence, at, at+2, history.OK)
	o.Value, o.Before = &v, &before
}

// pause is a holder ("1") stopped past its lease: process 2 takes the lock and sells one
// unit; 1 wakes and writes what it read before the pause. fenced: its write is refused.
func pause(fenced bool) []history.LockOp {
	r := &rec{t0: time.Unix(1_700_000_000, 0)}
	f1, f2 := int64(0), int64(0)
	if fenced {
		f1, f2 = 7, 8
	}
	r.op("1", history.Grant, "a", f1, 0, 1, history.OK)
	r.read("1", "a", f1, 2, 17)
	r.op("runner", history.Fault, "", 0, 10, 1510, history.OK).Fault = history.FaultPause
	r.ops[len(r.ops)-1].Process = "1"
	r.op("2", history.Grant, "b", f2, 600, 601, history.OK)
	r.read("2", "b", f2, 602, 17)
	r.write("2", "b", f2, 610, 16, 17) // a true decrement
	r.op("2", history.Release, "b", f2, 620, 621, history.OK)
	if fenced {
		w := r.op("1", history.Write, "a", f1, 1512, 1514, history.Fail)
		v := 16
		w.Value, w.Reason = &v, history.ReasonFence
		r.op("1", history.Loss, "a", f1, 1513, 1513, history.OK)
		r.op("1", history.Release, "a", f1, 1515, 1516, history.Unknown).Reason = "dlock: not held"
	} else {
		r.write("1", "a", f1, 1512, 16, 16) // wrote 16 over 16: one decrement lost
		r.op("1", history.Release, "a", f1, 1515, 1516, history.Unknown).Reason = "not held"
	}
	return r.ops
}

// TestOverlapAndOversold: the unfenced pause shows the two holders at once (the overlap
// from process 2's grant to its release) and process 1's write marked with the unit it
// oversold; the fenced one shows the same overlap, the write refused, and nothing oversold.
func TestOverlapAndOversold(t *testing.T) {
	tl := timeline.Build("k", pause(false))
	if got, want := len(tl.Lanes), 2; got != want {
		t.Fatalf("%d lanes, want %d: %+v", got, want, tl.Lanes)
	}
	if len(tl.Overlaps) != 1 || tl.Overlaps[0].From != 601 || tl.Overlaps[0].To != 620 {
		t.Fatalf("overlaps %+v, want one from 601 to 620 ms", tl.Overlaps)
	}
	if got, want := tl.Oversold, 1; got != want {
		t.Errorf("oversold = %d, want %d", got, want)
	}
	var bad []timeline.Mark
	for _, m := range tl.Lanes[0].Marks {
		if m.Oversold != 0 {
			bad = append(bad, m)
		}
	}
	if len(bad) != 1 || bad[0].Oversold != 1 || bad[0].At != 1514 {
		t.Errorf("process 1's marks that oversold: %+v, want its write at 1514 ms, 1 unit", bad)
	}
	if h := tl.Lanes[0].Holds[0]; h.End != "release failed" || h.To != 1515 || h.Reason != "not held" {
		t.Errorf("process 1's hold %+v, want it to end when it asked to release, which failed", h)
	}
	if f := tl.Lanes[0].Faults; len(f) != 1 || f[0].From != 10 || f[0].To != 1510 || f[0].Kind != history.FaultPause {
		t.Errorf("process 1's faults %+v, want the pause", f)
	}
	if tl.Focus == nil || tl.Focus.From != 1 || tl.Focus.To != 1514 {
		t.Errorf("focus %+v, want from process 1's grant to its overselling write", tl.Focus)
	}

	tl = timeline.Build("k", pause(true))
	if len(tl.Overlaps) != 1 || tl.Oversold != 0 || tl.Refused != 1 {
		t.Fatalf("fenced: overlaps %+v, oversold %d, refused %d; want 1, 0, 1", tl.Overlaps, tl.Oversold, tl.Refused)
	}
	m := tl.Lanes[0].Marks[1]
	if !m.Refused || m.Reason != history.ReasonFence || m.Fence != 7 {
		t.Errorf("fenced: process 1's write %+v, want refused for its stale fence 7", m)
	}
	if h := tl.Lanes[0].Holds[0]; h.End != "loss" || h.To != 1513 || h.Fence != 7 {
		t.Errorf("fenced: process 1's hold %+v, want it to end at its loss, fence 7", h)
	}
}

// TestNoOverlapInAHandoff is the negative control: holders that hand the lock over (each
// release asked before the next grant completes) and write true decrements show no overlap,
// nothing oversold, nothing refused, no focus.
func TestNoOverlapInAHandoff(t *testing.T) {
	r := &rec{t0: time.Unix(1_700_000_000, 0)}
	stock := 10
	for i, p := range []string{"1", "2", "3", "1", "2"} {
		at, tok, f := float64(i*20), string(rune('a'+i)), int64(i+1)
		r.op(p, history.Grant, tok, f, at, at+1, history.OK)
		r.read(p, tok, f, at+2, stock)
		r.write(p, tok, f, at+5, stock-1, stock)
		stock--
		r.op(p, history.Release, tok, f, at+19, at+21, history.OK) // completes after the next grant
	}
	tl := timeline.Build("k", r.ops)
	if len(tl.Lanes) != 3 || len(tl.Overlaps) != 0 || tl.Oversold != 0 || tl.Refused != 0 || tl.Focus != nil {
		t.Errorf("lanes %d, overlaps %+v, oversold %d, refused %d, focus %+v; want 3 lanes and nothing wrong",
			len(tl.Lanes), tl.Overlaps, tl.Oversold, tl.Refused, tl.Focus)
	}
}

// TestKilledHolder: a process killed while holding the lock holds it until the kill, not to
// the end of the history, and an old history (no values) still draws.
func TestKilledHolder(t *testing.T) {
	r := &rec{t0: time.Unix(1_700_000_000, 0)}
	r.op("1", history.Grant, "a", 0, 0, 1, history.OK)
	r.op("1", history.Fault, "", 0, 50, 52, history.OK).Fault = history.FaultKill
	r.op("2", history.Grant, "b", 0, 1000, 1001, history.OK)
	r.op("2", history.Write, "b", 0, 1002, 1005, history.OK)
	tl := timeline.Build("k", r.ops)
	if h := tl.Lanes[0].Holds[0]; h.End != "killed" || h.To != 52 {
		t.Errorf("the killed holder's hold %+v, want it to end at the kill", h)
	}
	if h := tl.Lanes[1].Holds[0]; h.End != "open" || h.To != tl.MS {
		t.Errorf("the last hold %+v, want it open to the end (%v ms)", h, tl.MS)
	}
	if len(tl.Overlaps) != 0 || tl.Oversold != 0 {
		t.Errorf("overlaps %+v, oversold %d; want none", tl.Overlaps, tl.Oversold)
	}
}
