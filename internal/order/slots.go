package order

import (
	"context"
	"sync"
)

// slots caps how many PostgreSQL connections the purchases of one product hold at once in
// this process (Config.ProductConns): the others wait here, bounded by their deadline,
// instead of in the pool where they would starve every other product. It is safe for
// concurrent use.
type slots struct {
	max int
	mu  sync.Mutex
	m   map[int64]*productSlots
}

type productSlots struct {
	held  chan struct{} // one token per connection in use
	users int           // purchases holding or waiting; the entry goes when it is 0
}

func newSlots(max int) *slots { return &slots{max: max, m: make(map[int64]*productSlots)} }

// acquire waits for a slot of product id, or for ctx to end. It returns the release.
func (s *slots) acquire(ctx context.Context, id int64) (release func(), err error) {
	s.mu.Lock()
	ps := s.m[id]
	if ps == nil {
		ps = &productSlots{held: make(chan struct{}, s.max)}
		s.m[id] = ps
	}
	ps.users++
	s.mu.Unlock()
	select {
	case ps.held <- struct{}{}:
		return func() { <-ps.held; s.leave(id, ps) }, nil
	case <-ctx.Done():
		s.leave(id, ps)
		return nil, context.Cause(ctx)
	}
}

func (s *slots) leave(id int64, ps *productSlots) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ps.users--; ps.users == 0 {
		delete(s.m, id)
	}
}
