package timeline_test

import (
	"path/filepath"
	"testing"

	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/timeline"
)

// recorded reads a lock history recorded by a real lab cell (three API processes and the
// lab's runner; TestTimelineInChromium in internal/labrun writes these files with
// UPDATE_SCREENSHOTS=1), and the pause the runner recorded.
func recorded(t *testing.T, name string) (ops []history.LockOp, paused history.LockOp) {
	t.Helper()
	ops, err := history.ReadLockOps(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	for _, op := range ops {
		if op.Kind == history.Fault && op.Fault == history.FaultPause {
			paused = op
		}
	}
	if paused.Process == "" {
		t.Fatalf("%s: no pause recorded", name)
	}
	return ops, paused
}

// lane is the lane of process p.
func lane(t *testing.T, tl timeline.Timeline, p string) timeline.Lane {
	t.Helper()
	for _, l := range tl.Lanes {
		if l.Process == p {
			return l
		}
	}
	t.Fatalf("no lane of process %s", p)
	return timeline.Lane{}
}

// TestRecordedPauses builds the timelines of three pause cells recorded in one run, each
// holder paused after its read. watchdog × pause (no fence): the paused holder overlaps a later
// holder and a write of its oversold, the units its writes oversold summing to the audit's
// (some: how many depends on where its write lands, docs/learn.md step 6); fence × pause (a
// fence, no cancellation): the same overlap, the paused holder's write refused by PostgreSQL
// for its stale fence, nothing cancelled, nothing oversold; dlock × pause: the overlap too (its
// holder believed it held the lock until told of the loss), an operation of the paused holder
// refused or cancelled, and nothing oversold. The negative control is the watchdog history cut
// just before the pause: processes handing the lock over, no overlap, nothing oversold.
func TestRecordedPauses(t *testing.T) {
	ops, paused := recorded(t, "watchdog-pause.jsonl")
	tl := timeline.Build(ops[0].Key, ops)
	if len(tl.Lanes) != 3 || len(tl.Overlaps) == 0 || tl.Oversold < 1 || tl.Focus == nil {
		t.Errorf("watchdog × pause: %d lanes, %d overlaps, oversold %d, focus %v; want 3, some, some, one",
			len(tl.Lanes), len(tl.Overlaps), tl.Oversold, tl.Focus)
	}
	over := 0
	for _, m := range lane(t, tl, paused.Process).Marks {
		over += max(m.Oversold, 0)
	}
	if over == 0 {
		t.Errorf("watchdog × pause: no write of the paused process %s oversold", paused.Process)
	}
	for _, o := range tl.Overlaps {
		if o.Processes[0] != paused.Process && o.Processes[1] != paused.Process {
			t.Errorf("watchdog × pause: overlap %+v without the paused process", o)
		}
	}

	var before []history.LockOp
	for _, op := range ops {
		if op.Complete.Before(paused.Invoke) {
			before = append(before, op)
		}
	}
	cut := timeline.Build(ops[0].Key, before)
	if len(cut.Lanes) < 2 || len(cut.Overlaps) != 0 || cut.Oversold != 0 || cut.Refused != 0 || cut.Focus != nil {
		t.Errorf("watchdog × pause before the pause (%d operations): %d lanes, overlaps %+v, oversold %d, refused %d; want two or three lanes and nothing wrong",
			len(before), len(cut.Lanes), cut.Overlaps, cut.Oversold, cut.Refused)
	}

	ops, paused = recorded(t, "fence-pause.jsonl")
	tl = timeline.Build(ops[0].Key, ops)
	if len(tl.Overlaps) == 0 || tl.Oversold != 0 || tl.Cancelled != 0 {
		t.Errorf("fence × pause: %d overlaps, oversold %d, cancelled %d; want some, 0 and 0", len(tl.Overlaps), tl.Oversold, tl.Cancelled)
	}
	refused := 0
	for _, m := range lane(t, tl, paused.Process).Marks {
		if m.Kind == history.Write && m.Refused && m.Reason == history.ReasonFence {
			refused++
		}
	}
	if refused == 0 {
		t.Errorf("fence × pause: no write of the paused process %s refused by the fence", paused.Process)
	}

	ops, paused = recorded(t, "dlock-pause.jsonl")
	tl = timeline.Build(ops[0].Key, ops)
	if len(tl.Overlaps) == 0 || tl.Oversold != 0 {
		t.Errorf("dlock × pause: %d overlaps, oversold %d; want some and 0", len(tl.Overlaps), tl.Oversold)
	}
	stopped := 0
	for _, m := range lane(t, tl, paused.Process).Marks {
		if m.Refused || m.Cancelled {
			stopped++
		}
	}
	if stopped == 0 {
		t.Errorf("dlock × pause: nothing of the paused process %s refused or cancelled", paused.Process)
	}
}
