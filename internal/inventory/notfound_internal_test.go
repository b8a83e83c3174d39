package inventory

import (
	"testing"
	"time"
)

// TestNotFoundBounded: a sweep of more unknown ids than notFoundMax within NotFoundTTL keeps
// at most notFoundMax of them, the newest; an id a lookup found missing is not remembered if
// the Store created a product since the lookup began.
func TestNotFoundBounded(t *testing.T) {
	var n notFound
	now := time.Now()
	for id := range int64(3 * notFoundMax) {
		n.add(id, n.generation(), now)
	}
	if len(n.until) > notFoundMax || len(n.fifo) > notFoundMax {
		t.Fatalf("remembers %d ids (%d queued), want at most %d", len(n.until), len(n.fifo), notFoundMax)
	}
	if !n.has(3*notFoundMax-1, now) || n.has(0, now) {
		t.Error("want the newest ids remembered, the oldest forgotten")
	}
	if n.has(3*notFoundMax-1, now.Add(NotFoundTTL)) {
		t.Error("an id is remembered past NotFoundTTL")
	}

	gen := n.generation()
	n.created(7)
	n.add(7, gen, now) // the lookup began before the creation: it may have missed it
	if n.has(7, now) {
		t.Error("an id created during its lookup is remembered as not found")
	}
}
