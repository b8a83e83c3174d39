package order

import (
	"testing"
	"time"
)

// TestTakeBefore: a fair product's leader takes the buyers who joined before the next
// process's waiter (always its own request), and the others go back: ahead of the buyers of
// the batch now open, or into a new batch returned to be led (nobody of them is told to lead
// it), with their latest deadline; a buyer put back can leave its new batch.
func TestTakeBefore(t *testing.T) {
	t0 := time.Now()
	req := func(ms int) *request {
		at := t0.Add(time.Duration(ms) * time.Millisecond)
		return &request{at: at, deadline: at.Add(time.Second), res: make(chan result, 1)}
	}
	b := newBatcher(128)
	first, a, late1, late2 := req(0), req(5), req(20), req(30)
	bt, lead := b.join(1, first)
	for _, r := range []*request{a, late1, late2} {
		b.join(1, r)
	}
	if !lead {
		t.Fatal("the first buyer does not lead")
	}
	got, next, until := b.takeBefore(1, bt, t0.Add(10*time.Millisecond))
	if len(got) != 2 || got[0] != first || got[1] != a {
		t.Fatalf("taken %d buyers, want the two before the cutoff", len(got))
	}
	if next == nil || len(next.reqs) != 2 || next.reqs[0] != late1 || next.reqs[1] != late2 {
		t.Fatalf("put back into %+v, want a new batch of late1 and late2", next)
	}
	if !until.Equal(late2.deadline) {
		t.Errorf("the new batch is to be led until %v, want late2's deadline %v", until, late2.deadline)
	}
	select {
	case r := <-late1.res:
		t.Errorf("late1 was told %+v; nobody put back leads", r)
	default:
	}
	newcomer := req(40)
	if nbt, lead := b.join(1, newcomer); lead || nbt != next {
		t.Error("a newcomer did not join the requeued batch")
	}
	if !b.leave(late1) || len(next.reqs) != 2 || next.reqs[0] != late2 {
		t.Error("a buyer put back cannot leave its new batch")
	}

	// With a batch already open, the rest go ahead of its buyers, and no new batch is made.
	b2 := newBatcher(128)
	x, y := req(0), req(50)
	bt2, _ := b2.join(2, x)
	b2.join(2, y)
	b2.take(2, bt2) // a leader took its batch; a new one opens
	open2, _ := b2.join(2, req(60))
	b2.mu.Lock()
	next2 := b2.requeueLocked(2, []*request{y})
	b2.mu.Unlock()
	if next2 != nil || open2.reqs[0] != y || len(open2.reqs) != 2 || y.bt != open2 {
		t.Errorf("the put-back buyer is not first in the open batch: %d buyers, new batch %v", len(open2.reqs), next2)
	}
}
