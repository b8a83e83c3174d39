package dlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

type lockState int

const (
	held     lockState = iota
	lost               // the watchdog or a refresh found the lock gone
	released           // Release was called
)

// Lock is a held lock, returned by Obtain; Key and Token never change, Fence only by
// RaiseFence. It is safe for concurrent use but meant to have one owner.
type Lock struct {
	c        *Client
	r        *request
	fence    atomic.Int64 // the acquisition's, or the last RaiseFence's
	acquired time.Time    // when the acquire call was sent

	nextWaiter time.Time // a fair lock's: when the waiter behind it started waiting (NextWaiterSince)

	refreshMu sync.Mutex // serializes renewals: the last to finish is the last applied

	turnTimer *time.Timer // calls passTurn at the deadline, once a local goroutine queues; guarded by Client.turns.mu
	watched   bool        // Watch was called: the watchdog passes the turn; guarded by Client.turns.mu
	holdsTurn atomic.Bool // the key's turn in the Client's local queue, until passTurn
	streak    int         // handoffs in a row that led to this lock (ClientOptions.Cohort)

	mu       sync.Mutex
	state    lockState
	deadline time.Time // local safe deadline
	cause    error     // why the lock was lost
	capped   bool      // the watchdog reached MaxHold and renews no more
	wctx     context.Context
	cancel   context.CancelCauseFunc // cancels wctx; nil unless the watchdog runs
	timer    *time.Timer             // fires at the deadline while watched
	done     chan struct{}           // closed when the watchdog exits
}

func newLock(c *Client, r *request, fence int64, sent time.Time) *Lock {
	l := &Lock{
		c:        c,
		r:        r,
		acquired: sent,
		deadline: sent.Add(r.ttl - r.driftFor(r.ttl)),
	}
	l.fence.Store(fence)
	return l
}

// passTurn lets the next goroutine of this Client that waits for the key compete in Redis
// (see Client.obtain). It gives the turn back once, on Release, on loss, when the watchdog
// stops, or at the deadline when unwatched; a Lock that never had the turn (fair, read-write)
// has nothing to give back.
func (l *Lock) passTurn() {
	if l.holdsTurn.CompareAndSwap(true, false) {
		l.c.turns.drop(l)
		l.c.queue.Unlock(l.r.key)
	}
}

// Key returns the locked key.
func (l *Lock) Key() string { return l.r.key }

// Token returns the lock's value in Redis, unique to this acquisition.
func (l *Lock) Token() string { return l.r.token }

// Acquired returns when the call that took the lock in Redis was sent: the successful attempt
// of Obtain, or the previous holder's handoff (ClientOptions.Cohort). The lock was taken
// after it, and before Obtain returned.
func (l *Lock) Acquired() time.Time { return l.acquired }

// Fence returns the lock's fencing token: its acquisition's, or the one RaiseFence minted
// since. Fences of the same key strictly increase with every successful Obtain, across
// processes; check it where the data lives (see the package documentation).
func (l *Lock) Fence() int64 { return l.fence.Load() }

// Deadline returns the local safe deadline: until then the lock is held for
// sure (when the acquire or last successful refresh call was sent, plus its
// ttl, minus the drift margin). Refresh and the watchdog move it on.
func (l *Lock) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// TTL returns the lock's remaining time to live in Redis, or ErrNotHeld if the key no
// longer holds it.
func (l *Lock) TTL(ctx context.Context) (time.Duration, error) {
	if l.is(released) {
		return 0, ErrNotHeld
	}
	ms, err := l.c.pttlCall(ctx, l.r)
	if err != nil {
		return 0, fmt.Errorf("dlock: ttl %q: %w", l.r.key, err)
	}
	if ms == notHeldPTTL {
		return 0, ErrNotHeld
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// Refresh sets the held lock's ttl and moves its safe deadline on (a watchdog makes it
// needless); it never re-acquires. It
// returns ErrNotHeld, reporting the lock lost, when the key is gone or taken, or the lock was
// released or lost before.
func (l *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	if err := l.r.checkTTL(ttl); err != nil {
		return err
	}
	return l.refresh(ctx, ttl.Truncate(time.Millisecond))
}

func (l *Lock) refresh(ctx context.Context, ttl time.Duration) error {
	l.refreshMu.Lock()
	defer l.refreshMu.Unlock()
	if err := l.heldErr(); err != nil {
		return err
	}
	sent := time.Now()
	ok, err := l.c.refreshCall(ctx, l.r, ttl)
	if err != nil {
		return fmt.Errorf("dlock: refresh %q: %w", l.r.key, err)
	}
	if ok == 0 {
		if err := l.heldErr(); err != nil {
			return err // released meanwhile: no loss
		}
		l.lose(fmt.Errorf("%w: the key no longer holds its token", ErrLost))
		return ErrNotHeld
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state == held {
		l.deadline = sent.Add(ttl - l.r.driftFor(ttl))
		if l.timer != nil {
			l.timer.Reset(time.Until(l.deadline))
		}
	}
	return nil
}

// Release deletes the key if it still holds this lock, wakes the waiters and stops the watchdog;
// ctx may be the watched context. It returns ErrNotHeld when the lock expired, was lost or
// released, or another holds the key (left untouched).
func (l *Lock) Release(ctx context.Context) error {
	wasLost, err := l.markReleased()
	if err != nil {
		return err
	}
	var ok int64
	handOff := !wasLost && l.c.mayHandOff(l)
	if handOff {
		ok, err = l.c.handOff(ctx, l)
	} else {
		ok, err = l.c.releaseCall(ctx, l)
	}
	l.stopWatch()
	switch {
	case err != nil:
		err = fmt.Errorf("dlock: release %q: %w", l.r.key, err)
	case ok == 0:
		err = ErrNotHeld
	case !handOff && !l.r.direct(): // fair and read-write waiters are woken by the release's message
		l.c.notify.wake(l.r.channel(), "")
	}
	l.passTurn()
	if wasLost {
		err = ErrNotHeld // even if the key still held the token, the holder was told
	}
	if l.r.timed() {
		l.r.obs.Released(l.r.key, time.Since(l.acquired), err)
	}
	return err
}

// markReleased marks the lock released, which makes renewals and the timers
// no-ops. It reports whether the lock had been lost, or errReleased.
func (l *Lock) markReleased() (wasLost bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.state == released {
		return false, errReleased
	}
	wasLost = l.state == lost
	l.state = released
	return wasLost, nil
}

// stopWatch stops the timers, cancels the watched context and waits for the
// watchdog to exit.
func (l *Lock) stopWatch() {
	l.mu.Lock()
	cancel, done, timer := l.cancel, l.done, l.timer
	l.mu.Unlock()
	if timer != nil {
		timer.Stop()
	}
	if cancel != nil {
		cancel(context.Canceled)
		<-done
	}
}

// heldErr returns nil while the lock is held, errReleased after Release,
// and ErrNotHeld after a loss.
func (l *Lock) heldErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch l.state {
	case released:
		return errReleased
	case lost:
		return ErrNotHeld
	}
	return nil
}

func (l *Lock) is(s lockState) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state == s
}

// lose marks a held lock lost, cancels its watched context with cause, and
// tells the Observer, once.
func (l *Lock) lose(cause error) {
	l.mu.Lock()
	cancel, ok := l.markLost(cause)
	l.mu.Unlock()
	l.lost(cancel, ok, cause)
}

// markLost is the locked part of lose; l.mu must be held.
func (l *Lock) markLost(cause error) (context.CancelCauseFunc, bool) {
	if l.state != held {
		return nil, false
	}
	l.state, l.cause = lost, cause
	return l.cancel, true
}

// lost is the unlocked part of lose.
func (l *Lock) lost(cancel context.CancelCauseFunc, ok bool, cause error) {
	if !ok {
		return
	}
	if cancel != nil {
		cancel(cause)
	}
	l.passTurn()
	l.r.obs.Lost(l.r.key, cause)
}

// errReleased is returned by a second Release.
var errReleased = fmt.Errorf("%w: released already", ErrNotHeld)

// errIsLost reports whether err says the lock is no longer held.
func errIsLost(err error) bool { return errors.Is(err, ErrNotHeld) || errors.Is(err, ErrLost) }
