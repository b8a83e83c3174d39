package dlock

import (
	"sync"
	"time"
)

// A Lock that neither releases nor watches its key keeps the key's turn in the Client's local
// queue until its safe deadline, when a timer passes it on (see Client.obtain). That timer is
// armed only once a goroutine of the same Client queues for the key: most Locks are released
// long before anyone queues behind them, and arming a timer at every Obtain wakes an idle
// thread of the process (docs/dlock.md, "Benchmarks").

// turns records which Lock holds the turn of each key, and how many goroutines queue for it.
type turns struct {
	mu      sync.Mutex
	holders map[string]*Lock
	queued  map[string]int
}

// hold records l as the holder of its key's turn, and arms l's turn timer if a goroutine
// queues for the key already.
func (t *turns) hold(l *Lock) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.holders == nil {
		t.holders, t.queued = map[string]*Lock{}, map[string]int{}
	}
	t.holders[l.r.key] = l
	if t.queued[l.r.key] > 0 {
		l.armTurn()
	}
}

// queue counts a goroutine that is about to queue for key (n = 1), arming the turn timer of
// the key's holder, or one that stopped queuing (n = -1).
func (t *turns) queue(key string, n int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.holders == nil {
		t.holders, t.queued = map[string]*Lock{}, map[string]int{}
	}
	if t.queued[key] += n; t.queued[key] <= 0 {
		delete(t.queued, key)
		return
	}
	if h := t.holders[key]; h != nil && n > 0 {
		h.armTurn()
	}
}

// drop forgets l as the holder of its key's turn and stops its turn timer.
func (t *turns) drop(l *Lock) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.holders[l.r.key] == l {
		delete(t.holders, l.r.key)
	}
	if l.turnTimer != nil {
		l.turnTimer.Stop()
	}
}

// overdue returns the Lock that holds key's turn past its safe deadline, unwatched, or nil:
// an Obtain without a Wait, which does not queue and so arms no timer, passes its turn.
func (t *turns) overdue(key string) *Lock {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.holders[key]; h != nil && !h.watched && !time.Now().Before(h.Deadline()) {
		return h
	}
	return nil
}

// keep stops l's turn timer for good: a watched Lock keeps the turn until its watchdog stops.
func (t *turns) keep(l *Lock) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l.watched = true
	if l.turnTimer != nil {
		l.turnTimer.Stop()
	}
}

// armTurn starts l's turn timer, to pass the turn at l's safe deadline, unless it runs or l
// is watched; the Client's turns.mu must be held.
func (l *Lock) armTurn() {
	if l.turnTimer == nil && !l.watched {
		l.turnTimer = time.AfterFunc(time.Until(l.Deadline()), l.passTurn)
	}
}
