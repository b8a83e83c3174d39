// Package timeline draws a lock history (internal/history's LockOp, recorded by the API
// processes and the lab's runner) as a timeline: one lane per process, time across; in each
// lane the lock held from grant to release or loss, labelled with its fence, the faults done to
// the process, and each read and write of the stock as a mark with its fence and value. It is
// what Kleppmann's fencing diagram shows, drawn from a real run.
//
// Build does the judging in Go, where it is tested: where two processes held the lock at once
// (Overlaps), which reads and writes PostgreSQL refused for a stale fence (Refused), which the
// holder cancelled itself, told its lock was lost (Cancelled), and which writes broke the stock: a
// write that overwrote a stock other than the one it read wrote back a value computed from a
// stale read, and the units it gave back, written − (before − 1), are units sold twice. Over a
// sale those units sum to the audit's oversold (orders + stock − initial), since each
// committed write took the stock from before to written and made one order.
//
// JS is the script that draws a Timeline as SVG in a page, self-contained, defined once here
// and embedded by both pages that show it: the lab's report (internal/labrun) and the live
// page (internal/liveui).
package timeline

import (
	"cmp"
	"slices"
	"time"

	"github.com/seckill/seckill/internal/history"
)

// Timeline is a lock history drawn as lanes. Times are milliseconds since Start.
type Timeline struct {
	Key   string    `json:"key"`
	Start time.Time `json:"start"`
	MS    float64   `json:"ms"` // when the last operation completed
	Lanes []Lane    `json:"lanes"`
	// Overlaps are the spans in which two processes held the lock at once, by time.
	Overlaps []Span `json:"overlaps"`
	// Oversold is the sum of the writes' Oversold.
	Oversold int `json:"oversold"`
	// Refused counts the marks refused for a stale fence; Cancelled, those stopped by a loss.
	Refused   int `json:"refused"`
	Cancelled int `json:"cancelled"`
	// FenceBase is the first hold's fence; the page labels fences F₀+n.
	FenceBase int64 `json:"fence_base,omitempty"`
	// Focus is the span of the first thing that went wrong.
	Focus *Span `json:"focus,omitempty"`
}

// Lane is one process's part of the history.
type Lane struct {
	Process string  `json:"process"`
	Holds   []Hold  `json:"holds"`
	Faults  []Fault `json:"faults,omitempty"`
	Marks   []Mark  `json:"marks"`
}

// Hold is a lock held as its holder believed, from grant to release, loss, kill or the end.
type Hold struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"`
	Fence int64   `json:"fence,omitempty"`
	Token string  `json:"token"`
	// End is "release", "release failed" (Reason says), "loss", "killed" or "open".
	End    string `json:"end"`
	Reason string `json:"reason,omitempty"`
}

// Fault is a fault done to the process, from its start to its end (SIGCONT, the heal).
type Fault struct {
	From float64 `json:"from"`
	To   float64 `json:"to"`
	Kind string  `json:"kind"` // history.FaultPause, FaultKill, FaultFailover, FaultPartition
}

// Mark is a read or a write of the stock under the lock.
type Mark struct {
	From    float64 `json:"from"` // invoke
	At      float64 `json:"at"`   // completion
	Kind    string  `json:"kind"` // history.Read or history.Write
	Fence   int64   `json:"fence,omitempty"`
	Outcome string  `json:"outcome"`
	Value   *int    `json:"value,omitempty"`  // read or written
	Before  *int    `json:"before,omitempty"` // what a write overwrote
	// Refused: a stale fence (history.ReasonFence). Cancelled: a loss (history.ReasonLost).
	Refused   bool   `json:"refused,omitempty"`
	Cancelled bool   `json:"cancelled,omitempty"`
	Reason    string `json:"reason,omitempty"`
	// Oversold is written − (before − 1): above 0, units sold twice.
	Oversold int `json:"oversold,omitempty"`
}

// Span is a stretch of time and the processes in it.
type Span struct {
	From      float64  `json:"from"`
	To        float64  `json:"to"`
	Processes []string `json:"processes,omitempty"`
	// Since is, for an overlap, when the first of its two holds began.
	Since float64 `json:"since,omitempty"`
}

// Build draws one lock key's ops as lanes, one per process.
func Build(key string, ops []history.LockOp) Timeline {
	t := Timeline{Key: key}
	if len(ops) == 0 {
		return t
	}
	t.Start = slices.MinFunc(ops, func(a, b history.LockOp) int { return a.Invoke.Compare(b.Invoke) }).Invoke
	ms := func(at time.Time) float64 { return float64(at.Sub(t.Start).Microseconds()) / 1000 }
	for _, op := range ops {
		t.MS = max(t.MS, ms(op.Invoke), ms(op.Complete))
	}
	lanes := map[string]*Lane{}
	var order []string
	lane := func(p string) *Lane {
		if l, ok := lanes[p]; ok {
			return l
		}
		lanes[p] = &Lane{Process: p}
		order = append(order, p)
		return lanes[p]
	}
	killed := map[string]float64{}
	for _, op := range ops {
		if op.Kind == history.Fault && op.Fault == history.FaultKill {
			killed[op.Process] = ms(cmp.Or(op.Complete, op.Invoke))
		}
	}
	var everyone []Fault // faults that name no process: drawn in every lane
	for _, op := range ops {
		if op.Kind == history.Fault && op.Process == "" {
			everyone = append(everyone, Fault{From: ms(op.Invoke), To: ms(cmp.Or(op.Complete, op.Invoke)), Kind: op.Fault})
			continue
		}
		switch op.Kind {
		case history.Grant:
			if op.Outcome != history.OK {
				continue
			}
			l := lane(op.Process)
			// To < 0: not ended yet (endHold finds it by its token).
			l.Holds = append(l.Holds, Hold{From: ms(op.Complete), To: -1, Fence: op.Fence, Token: op.Token, End: "open"})
		case history.Release, history.Loss:
			h := endHold(lane(op.Process), op.Token)
			if h == nil {
				continue
			}
			h.To, h.End = ms(op.Invoke), op.Kind
			if op.Kind == history.Loss {
				h.To = ms(op.Complete)
			} else if op.Outcome != history.OK {
				h.End, h.Reason = "release failed", op.Reason
			}
		case history.Read, history.Write:
			lane(op.Process).Marks = append(lane(op.Process).Marks, mark(op, ms))
		case history.Fault:
			l := lane(op.Process)
			l.Faults = append(l.Faults, Fault{From: ms(op.Invoke), To: ms(cmp.Or(op.Complete, op.Invoke)), Kind: op.Fault})
		}
	}
	for _, p := range order {
		l := lanes[p]
		for i := range l.Holds {
			if h := &l.Holds[i]; h.To < 0 {
				h.To = t.MS
				if k, ok := killed[p]; ok && k >= h.From {
					h.To, h.End = k, "killed"
				}
			}
		}
		l.Faults = append(l.Faults, everyone...)
		t.Lanes = append(t.Lanes, *l)
	}
	t.Overlaps = overlaps(t.Lanes)
	t.FenceBase = fenceBase(t.Lanes)
	t.judge()
	return t
}

// endHold is the hold of lane l granted with token that has not ended yet, or nil.
func endHold(l *Lane, token string) *Hold {
	for i := len(l.Holds) - 1; i >= 0; i-- {
		if l.Holds[i].Token == token && l.Holds[i].To < 0 {
			return &l.Holds[i]
		}
	}
	return nil
}

// mark is the read or write op as a mark, judged.
func mark(op history.LockOp, ms func(time.Time) float64) Mark {
	m := Mark{From: ms(op.Invoke), At: ms(cmp.Or(op.Complete, op.Invoke)), Kind: op.Kind, Fence: op.Fence,
		Outcome: op.Outcome, Value: op.Value, Before: op.Before, Reason: op.Reason}
	m.Refused = op.Outcome == history.Fail && op.Reason == history.ReasonFence
	m.Cancelled = op.Outcome == history.Fail && op.Reason == history.ReasonLost
	if op.Kind == history.Write && op.Outcome == history.OK && op.Value != nil && op.Before != nil {
		m.Oversold = *op.Value - (*op.Before - 1)
	}
	return m
}

// fenceBase is the fence of the earliest hold that has one, or 0.
func fenceBase(lanes []Lane) int64 {
	base, from := int64(0), 0.0
	for _, l := range lanes {
		for _, h := range l.Holds {
			if h.Fence != 0 && (base == 0 || h.From < from) {
				base, from = h.Fence, h.From
			}
		}
	}
	return base
}
