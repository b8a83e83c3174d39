package inventory

import (
	"cmp"
	"sync"
	"time"
)

// NotFoundTTL is how long a Store remembers an unknown id (docs/api.md#unknown-ids).
const NotFoundTTL = time.Second

// notFoundMax bounds how many ids a Store remembers as not found: a client sweeping ids
// cannot grow its memory without bound. Past it, the oldest are forgotten first.
const notFoundMax = 10_000

// notFound is a Store's short memory of the ids PostgreSQL had no product of. It is safe for
// concurrent use.
type notFound struct {
	mu    sync.Mutex
	until map[int64]time.Time // id -> when it is forgotten
	fifo  []missing           // in the order remembered, which is the order they expire in
	gen   uint64              // counts the Store's creations (see add)
	ttl   time.Duration       // 0: NotFoundTTL (tests set it longer)
}

type missing struct {
	id    int64
	until time.Time
}

// has reports whether id is remembered as not found at now.
func (n *notFound) has(id int64, now time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	until, ok := n.until[id]
	return ok && now.Before(until)
}

// generation returns the count of creations, to pass to add after the lookup.
func (n *notFound) generation() uint64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.gen
}

// add remembers id as not found from now on, unless the Store created a product since gen
// was read (the lookup may have missed it).
func (n *notFound) add(id int64, gen uint64, now time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if gen != n.gen {
		return
	}
	if n.until == nil {
		n.until = make(map[int64]time.Time)
	}
	for len(n.fifo) > 0 && (len(n.fifo) >= notFoundMax || !now.Before(n.fifo[0].until)) {
		if m := n.fifo[0]; n.until[m.id] == m.until {
			delete(n.until, m.id)
		}
		n.fifo = n.fifo[1:]
	}
	if _, ok := n.until[id]; ok {
		return
	}
	until := now.Add(cmp.Or(n.ttl, NotFoundTTL))
	n.until[id] = until
	n.fifo = append(n.fifo, missing{id, until})
}

// created forgets id: the Store has just created it, or another process announced it
// (Creations).
func (n *notFound) created(id int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.gen++
	delete(n.until, id)
}
