package order

import (
	"sync"
	"time"
)

// request is one buyer waiting in a batch.
type request struct {
	user int64
	at   time.Time   // when the buyer joined
	res  chan result // buffered: the leader never blocks on a buyer who left
}

// result is a buyer's answer, or (lead set) the order to lead that batch (see requeue).
type result struct {
	o         Order
	err       error
	lead      *batch
	confirmed bool // the leader confirmed the buyer's order in the gate (redis strategy)
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
	if b.open[id] == bt {
		delete(b.open, id)
	}
	reqs := bt.reqs
	bt.reqs = nil
	return reqs
}

// leave removes r from bt if the leader has not taken it yet, and reports whether it did;
// if not, a result is on its way to r.
func (b *batcher) leave(bt *batch, r *request) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
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
// back earlier), so that a held lock serves someone; it puts the others back with requeue,
// to be served after the lock's next waiter, who came before them.
func (b *batcher) takeBefore(id int64, bt *batch, cutoff time.Time) []*request {
	reqs := b.take(id, bt)
	i := 1
	for i < len(reqs) && reqs[i].at.Before(cutoff) {
		i++
	}
	if rest := reqs[i:]; len(rest) > 0 {
		b.requeue(id, rest)
	}
	return reqs[:i:i]
}

// requeue puts buyers a leader did not take into the product's open batch, ahead of its
// buyers (they came first), or into a new open batch whose first buyer is told to lead it.
func (b *batcher) requeue(id int64, rest []*request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bt, ok := b.open[id]; ok {
		bt.reqs = append(append([]*request(nil), rest...), bt.reqs...)
		if len(bt.reqs) >= b.max {
			delete(b.open, id)
			close(bt.full)
		}
		return
	}
	bt := &batch{reqs: append([]*request(nil), rest...), full: make(chan struct{})}
	if len(bt.reqs) >= b.max {
		close(bt.full)
	} else {
		b.open[id] = bt
	}
	rest[0].res <- result{lead: bt}
}
