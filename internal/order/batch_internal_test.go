package order

import (
	"testing"
	"time"
)

// TestTakeBefore: a fair product's leader takes the buyers who joined before the next
// process's waiter (always its own request), and the others go back: ahead of the buyers of
// the batch now open, or into a new batch whose first buyer is told to lead it.
func TestTakeBefore(t *testing.T) {
	t0 := time.Now()
	req := func(ms int) *request {
		return &request{at: t0.Add(time.Duration(ms) * time.Millisecond), res: make(chan result, 1)}
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
	got := b.takeBefore(1, bt, t0.Add(10*time.Millisecond))
	if len(got) != 2 || got[0] != first || got[1] != a {
		t.Fatalf("taken %d buyers, want the two before the cutoff", len(got))
	}
	res := <-late1.res // the first of the rest leads the new batch
	if res.lead == nil || len(res.lead.reqs) != 2 || res.lead.reqs[1] != late2 {
		t.Fatalf("late1 got %+v, want to lead a batch of late1 and late2", res)
	}
	newcomer := req(40)
	if nbt, lead := b.join(1, newcomer); lead || nbt != res.lead {
		t.Error("a newcomer did not join the requeued batch")
	}

	// With a batch already open, the rest go ahead of its buyers, and nobody is told to lead.
	b2 := newBatcher(128)
	x, y := req(0), req(50)
	bt2, _ := b2.join(2, x)
	b2.join(2, y)
	b2.take(2, bt2) // a leader took its batch; a new one opens
	open, _ := b2.join(2, req(60))
	b2.requeue(2, []*request{y})
	if open.reqs[0] != y || len(open.reqs) != 2 {
		t.Errorf("the put-back buyer is not first in the open batch: %d buyers", len(open.reqs))
	}
	select {
	case r := <-y.res:
		t.Errorf("y was told %+v; the open batch has a leader already", r)
	default:
	}
}
