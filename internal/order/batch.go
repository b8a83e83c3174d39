package order

import (
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// request is one buyer waiting in a batch.
type request struct {
	user     int64
	at       time.Time         // when the buyer joined
	deadline time.Time         // the buyer's own purchase deadline; zero if it has none
	res      chan result       // buffered: the leader never blocks on a buyer who left
	bt       *batch            // the batch it is in now (a fair leader may put it back into another); under batcher.mu
	span     trace.SpanContext // the buyer's span, which its batch's span links to; zero when tracing is off
}

// result is a buyer's answer.
type result struct {
	o         Order
	err       error
	confirmed bool // the leader confirmed the buyer's order in the gate (redis strategy)
	had       bool // already purchased, not by this request's entry: it sold nothing
}

// batch collects the buyers of one product who arrive while its leader waits for, or holds,
// the product's lock. It is open to newcomers until the leader takes it or it is full.
type batch struct {
	reqs []*request
	full chan struct{} // closed when the batch reaches the size limit
}

// batcher keeps at most one open batch per product. It is safe for concurrent use.
type batcher struct {
	mu   sync.Mutex
	max  int
	open map[int64]*batch
}

func newBatcher(max int) *batcher {
	return &batcher{max: max, open: make(map[int64]*batch)}
}

// join adds r to the open batch of product id, opening one if there is none. lead is true
// for the buyer who opened it: that buyer must serve the batch.
func (b *batcher) join(id int64, r *request) (bt *batch, lead bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	bt, ok := b.open[id]
	if !ok {
		bt = &batch{full: make(chan struct{})}
		b.open[id] = bt
		lead = true
	}
	bt.reqs = append(bt.reqs, r)
	r.bt = bt
	if len(bt.reqs) >= b.max {
		delete(b.open, id) // newcomers start the next batch
		close(bt.full)
	}
	return bt, lead
}

// take closes bt to newcomers and returns its buyers. After take, every buyer in it is
// owed exactly one result.
func (b *batcher) take(id int64, bt *batch) []*request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.takeLocked(id, bt)
}

func (b *batcher) takeLocked(id int64, bt *batch) []*request {
	if b.open[id] == bt {
		delete(b.open, id)
	}
	reqs := bt.reqs
	bt.reqs = nil
	return reqs
}

// leave removes r from the batch it is in if no leader has taken it yet, and reports whether
// it did; if not, a result is on its way to r.
func (b *batcher) leave(r *request) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	bt := r.bt
	for i, q := range bt.reqs {
		if q == r {
			bt.reqs = append(bt.reqs[:i], bt.reqs[i+1:]...)
			return true
		}
	}
	return false
}

// takeBefore is take for a fair product's leader: it returns the buyers who joined before
// cutoff, and always the first (who came first of all, the leader's own buyer or one put
// back earlier), so that a held lock serves someone; it puts the others back, in the same
// step, to be served after the lock's next waiter, who came before them (see requeue). If
// they go into a new batch, that batch is returned with the latest of their deadlines: the
// caller must have it led, until then at the latest.
func (b *batcher) takeBefore(id int64, bt *batch, cutoff time.Time) (taken []*request, next *batch, until time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	reqs := b.takeLocked(id, bt)
	i := min(1, len(reqs))
	for i < len(reqs) && reqs[i].at.Before(cutoff) {
		i++
	}
	if rest := reqs[i:]; len(rest) > 0 {
		next = b.requeueLocked(id, rest)
		_, until = span(rest)
	}
	return reqs[:i:i], next, until
}

// requeueLocked puts buyers a leader did not take into the product's open batch, ahead of its
// buyers (they came first), or into a new open batch, which it returns: none of them leads it
// (the first may have gone, and its deadline is not the others'), so the caller has it led.
// Each buyer can still leave it, from its new batch.
func (b *batcher) requeueLocked(id int64, rest []*request) *batch {
	bt, ok := b.open[id]
	if ok {
		bt.reqs = append(append([]*request(nil), rest...), bt.reqs...)
	} else {
		bt = &batch{reqs: append([]*request(nil), rest...), full: make(chan struct{})}
		b.open[id] = bt
	}
	for _, r := range rest {
		r.bt = bt
	}
	if len(bt.reqs) >= b.max {
		delete(b.open, id)
		close(bt.full)
	}
	if ok {
		return nil
	}
	return bt
}

// span returns the earliest and the latest deadline of reqs (zero ones ignored).
func span(reqs []*request) (first, last time.Time) {
	for _, r := range reqs {
		if r.deadline.IsZero() {
			continue
		}
		if first.IsZero() || r.deadline.Before(first) {
			first = r.deadline
		}
		if r.deadline.After(last) {
			last = r.deadline
		}
	}
	return first, last
}
