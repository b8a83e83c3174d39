package dlock

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"
)

// The local queue (Client.queue, a keyed.Mutexes) gives one goroutine per key at a time the
// turn to compete in Redis; the others of the same Client queue on the key, in FIFO order
// (the order of a channel's blocked senders). A goroutine that wins keeps the turn in its
// Lock (see Client.obtain). Keys are dropped when unused, so the queue does not grow with
// the number of keys.

// enterQueue takes the key's turn in c's local queue. Without a Wait (expired nil) it does
// not queue: a goroutine already having the turn means the key is busy.
func (c *Client) enterQueue(ctx context.Context, key string, expired <-chan time.Time) error {
	if expired == nil {
		if !c.queue.TryLock(key) {
			return ErrNotObtained
		}
		return nil
	}
	switch err := c.queue.LockBefore(ctx, key, expired); {
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
	timer, expired := r.waitTimer()
	defer stopTimer(timer)
	if err := c.enterQueue(ctx, r.key, expired); err != nil {
		if ctx.Err() == nil {
			r.obs.Contended(r.key)
		}
		return nil, err
	}
	l := c.fromGrant(r) // a lock handed over by this Client's last holder of the key
	if l == nil {
		var err error
		if l, err = c.attempt(ctx, r, expired); err != nil {
			c.queue.Unlock(r.key)
			return nil, err
		}
	}
	l.holdsTurn.Store(true)
	l.passTurn = sync.OnceFunc(func() {
		l.holdsTurn.Store(false)
		c.queue.Unlock(r.key)
	})
	l.turnTimer = time.AfterFunc(time.Until(l.deadline), l.passTurn)
	return l, nil
}

// attempt tries to acquire until it succeeds or gives up. After the first
// failed try it subscribes to the key's release channel; the subscription's
// confirmation wakes it for one more try, which covers a release that landed
// between the failed try and the subscription. Under Redlock, a try that no
// majority of nodes answered is retried like a busy one while Wait lasts, and
// its error is returned if Wait runs out on it.
func (c *Client) attempt(ctx context.Context, r *request, expired <-chan time.Time) (*Lock, error) {
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
		if last = nil; expired != nil && errors.Is(err, errNoMajority) {
			last, err = err, nil
		}
		if l != nil || err != nil {
			return l, err
		}
		if last == nil {
			r.obs.Contended(r.key)
		}
		if expired == nil {
			return nil, ErrNotObtained
		}
		if n == 0 {
			sub = c.notify.subscribe(r.channel)
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
		case <-expired:
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

// waitTimer returns the timer of r's Wait and the channel that fires when it runs out; both
// nil without a Wait. Stop it with stopTimer (a plain function: deferring it allocates
// nothing, on every Obtain).
func (r *request) waitTimer() (*time.Timer, <-chan time.Time) {
	if r.wait <= 0 {
		return nil, nil
	}
	t := time.NewTimer(r.wait)
	return t, t.C
}

// stopTimer stops t; nil-safe.
func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}
