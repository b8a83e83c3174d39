package dlock

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// The local queue (Client.queue, a keyed.Mutexes) gives one goroutine per key at a time the
// turn to compete in Redis; the others of the same Client queue on the key, in FIFO order
// (the order of a channel's blocked senders). A goroutine that wins keeps the turn in its
// Lock (see Client.obtain). Keys are dropped when unused, so the queue does not grow with
// the number of keys.

// enterQueue takes the key's turn in c's local queue. Without a Wait it does not queue: a
// goroutine already having the turn means the key is busy.
func (c *Client) enterQueue(ctx context.Context, key string, w *waitClock) error {
	if c.queue.TryLock(key) {
		return nil
	}
	if h := c.turns.overdue(key); h != nil {
		h.passTurn()
		if c.queue.TryLock(key) {
			return nil
		}
	}
	if !w.on() {
		return ErrNotObtained
	}
	c.turns.queue(key, 1)
	defer c.turns.queue(key, -1)
	switch err := c.queue.LockBefore(ctx, key, w.C()); {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return notObtained(ctx)
	default:
		return ErrNotObtained
	}
}

// obtain runs an Obtain: queue locally, then attempt until the lock is
// taken, Wait runs out, ctx ends, or Redis fails. A lock taken keeps the turn
// until it is released or lost, or its watchdog stops, or (unwatched) its
// safe deadline passes: meanwhile the next local waiter has nothing to gain
// from asking Redis.
func (c *Client) obtain(ctx context.Context, r *request) (*Lock, error) {
	if ctx.Err() != nil {
		return nil, notObtained(ctx)
	}
	w := r.waitClock()
	defer w.stop()
	if err := c.enterQueue(ctx, r.key, &w); err != nil {
		if ctx.Err() == nil {
			r.obs.Contended(r.key)
		}
		return nil, err
	}
	l := c.fromGrant(r) // a lock handed over by this Client's last holder of the key
	if l == nil {
		var err error
		if l, err = c.attempt(ctx, r, &w); err != nil {
			c.queue.Unlock(r.key)
			return nil, err
		}
	}
	l.holdsTurn.Store(true)
	c.turns.hold(l)
	return l, nil
}

// attempt tries to acquire until it succeeds or gives up. After the first
// failed try it subscribes to the key's release channel; the subscription's
// confirmation wakes it for one more try, which covers a release that landed
// between the failed try and the subscription. Under Redlock, a try that no
// majority of nodes answered is retried like a busy one while Wait lasts, and
// its error is returned if Wait runs out on it.
func (c *Client) attempt(ctx context.Context, r *request, w *waitClock) (*Lock, error) {
	var sub *subscription    // nil until the first failed try, or if c is closed
	var turn <-chan struct{} // a fair waiter's own wake-up (see ObtainFair)
	defer func() {
		if r.direct() {
			c.notify.leaveFair(sub, r.token)
		}
		c.notify.unsubscribe(sub)
	}()
	var pause *time.Timer
	defer func() {
		if pause != nil {
			pause.Stop()
		}
	}()
	var last error // the last try's errNoMajority
	for n := 0; ; n++ {
		sub.drain() // a release before this try is seen by the try itself
		drainSignal(turn)
		l, pttl, err := c.try(ctx, r, n)
		if last = nil; w.on() && errors.Is(err, errNoMajority) {
			last, err = err, nil
		}
		if l != nil || err != nil {
			return l, err
		}
		if last == nil {
			r.obs.Contended(r.key)
		}
		if !w.on() {
			return nil, ErrNotObtained
		}
		if n == 0 {
			sub = c.notify.subscribe(r.channel())
			if r.direct() {
				turn = c.notify.joinFair(sub, r.token)
			}
			pause = time.NewTimer(r.backoff(n, pttl))
		} else {
			pause.Reset(r.backoff(n, pttl))
		}
		wake := sub.wakeC()
		if r.direct() {
			wake = turn
		}
		select {
		case <-wake:
		case <-pause.C:
		case <-ctx.Done():
			return nil, notObtained(ctx)
		case <-w.C():
			if last != nil {
				return nil, last
			}
			return nil, ErrNotObtained
		}
	}
}

// backoff returns the pause after the n-th failed try (from 0): drawn at
// random between minBackoff and a cap that doubles from minBackoff up to
// maxBackoff, and no longer than the holder's remaining ttl (plus 1ms) when
// that is known.
func (r *request) backoff(n int, pttl time.Duration) time.Duration {
	ceil := r.minBackoff
	for i := 0; i < n && ceil < r.maxBackoff; i++ {
		if ceil > r.maxBackoff/2 {
			ceil = r.maxBackoff
			break
		}
		ceil *= 2
	}
	d := r.minBackoff + rand.N(ceil-r.minBackoff+1)
	if pttl > 0 {
		d = min(d, pttl+time.Millisecond)
	}
	return d
}

// drainSignal discards a pending signal of c; nil-safe.
func drainSignal(c <-chan struct{}) {
	select {
	case <-c:
	default:
	}
}

// waitClock is the deadline of an Obtain's Wait. It starts only when the Obtain has to wait
// (for the key's turn, or after a try found the key held), and so does its timer: an Obtain
// that finds the key free reads no clock and arms no timer (arming a timer can wake an idle
// thread, on another core, at every Obtain).
type waitClock struct {
	wait  time.Duration // zero: no Wait, one try
	timer *time.Timer
}

// waitClock returns the clock of r's Wait.
func (r *request) waitClock() waitClock { return waitClock{wait: r.wait} }

// on reports whether there is a Wait.
func (w *waitClock) on() bool { return w.wait > 0 }

// C returns the channel that delivers when the Wait runs out, starting it on its first call;
// nil (never delivers) without a Wait.
func (w *waitClock) C() <-chan time.Time {
	if !w.on() {
		return nil
	}
	if w.timer == nil {
		w.timer = time.NewTimer(w.wait)
	}
	return w.timer.C
}

// stop stops the timer, if it started.
func (w *waitClock) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}
