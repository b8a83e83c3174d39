package order

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// The controlled delay of the wait for a product's connection slots (see slots).
const (
	// standingAfter is how long the wait must have stayed non-empty for it to be a standing
	// queue: more purchases arriving than the product's transactions can take, not a burst.
	standingAfter = 100 * time.Millisecond
	// standingWait is how long a purchase that arrives at a standing queue waits for a slot
	// before it is answered ErrBusy.
	standingWait = 5 * time.Millisecond
)

// slots caps how many PostgreSQL connections the purchases of one product hold at once in this
// process (Config.ProductConns); the others wait here, in arrival order, within their deadline.
// Once that wait has stood for standingAfter, a newcomer waits standingWait at most and is
// answered ErrBusy, nothing written, and told to the observer (Shed): a controlled delay,
// docs/strategies.md. It is safe for concurrent use.
type slots struct {
	max      int
	observer Observer // told of each purchase shed
	mu       sync.Mutex
	m        map[int64]*productSlots
	now      func() time.Time // time.Now; a test's clock
}

type productSlots struct {
	held    chan struct{} // one token per connection in use
	users   int           // purchases holding or waiting; the entry goes when it is 0
	waiting int           // purchases waiting for a token
	since   time.Time     // when the wait last became non-empty
}

func newSlots(max int, observer Observer) *slots {
	return &slots{max: max, observer: observer, m: make(map[int64]*productSlots), now: time.Now}
}

// acquire waits for a slot of product id, whose purchases are counted under strategy: until
// ctx ends, or for standingWait when it finds a standing queue (then ErrBusy, and the
// observer is told). It returns the release.
func (s *slots) acquire(ctx context.Context, id int64, strategy inventory.Strategy) (release func(), err error) {
	s.mu.Lock()
	ps := s.m[id]
	if ps == nil {
		ps = &productSlots{held: make(chan struct{}, s.max)}
		s.m[id] = ps
	}
	ps.users++
	select {
	case ps.held <- struct{}{}: // a free slot: no wait
		s.mu.Unlock()
		return s.releaser(id, ps), nil
	default:
	}
	now := s.now()
	if ps.waiting == 0 {
		ps.since = now
	}
	ps.waiting++
	standing := now.Sub(ps.since) >= standingAfter
	s.mu.Unlock()
	var shed <-chan time.Time
	if standing {
		t := time.NewTimer(standingWait)
		defer t.Stop()
		shed = t.C
	}
	select {
	case ps.held <- struct{}{}: // blocked senders are served in arrival order
		s.endWait(ps)
		return s.releaser(id, ps), nil
	case <-shed:
		s.observer.Shed(strategy)
		err = fmt.Errorf("%w: product %d: its purchases have queued for a connection for over %v in this process",
			ErrBusy, id, standingAfter)
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	s.endWait(ps)
	s.leave(id, ps)
	return nil, err
}

func (s *slots) releaser(id int64, ps *productSlots) func() {
	return func() { <-ps.held; s.leave(id, ps) }
}

func (s *slots) endWait(ps *productSlots) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps.waiting--
}

func (s *slots) leave(id int64, ps *productSlots) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ps.users--; ps.users == 0 {
		delete(s.m, id)
	}
}
