package zklock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Lock is a held lock. Its methods are safe for concurrent use.
type Lock struct {
	c       *Client
	s       *session
	key     string
	node    string // the claim's node, the lock's holder
	fence   int64
	sent    time.Time // when its claim was sent
	at      time.Time
	waited  bool
	lost    context.Context // cancelled, with a cause wrapping ErrLost, when the session is lost
	lose    context.CancelCauseFunc
	release sync.Once
	relErr  error
}

// Key is the lock's name.
func (l *Lock) Key() string { return l.key }

// Node is the path of the lock's node in ZooKeeper.
func (l *Lock) Node() string { return l.node }

// Acquired returns when the lock's claim was sent to ZooKeeper; the grant came once older
// claims were gone.
func (l *Lock) Acquired() time.Time { return l.sent }

// Fence is the lock's fencing token, its node's creation zxid: a later holder's is always
// larger.
func (l *Lock) Fence() int64 { return l.fence }

// Watch returns a context derived from ctx that is cancelled, with a cause wrapping ErrLost,
// if the lock's session is suspended (its connection lost) or expires while it is held.
func (l *Lock) Watch(ctx context.Context) context.Context {
	wctx, cancel := context.WithCancelCause(ctx)
	context.AfterFunc(l.lost, func() {
		if cause := context.Cause(l.lost); errors.Is(cause, ErrLost) { // not a release
			cancel(cause)
		}
	})
	return wctx
}

// loseTo tells the holder its lock is lost, with cause, unless it was released.
func (l *Lock) loseTo(cause error) {
	if l.lost.Err() != nil {
		return
	}
	l.lose(cause)
	if context.Cause(l.lost) == cause {
		l.c.obs.Lost(l.key, cause)
	}
}

// Obtain takes the lock named key in a session of timeout ttl (see Options.SessionTimeout),
// waiting up to wait for the holders before it; wait <= 0 tries once. See the package doc for
// the errors.
func (c *Client) Obtain(ctx context.Context, key string, ttl, wait time.Duration) (*Lock, error) {
	start := time.Now()
	l, err := c.obtain(ctx, key, ttl, wait)
	if err != nil {
		c.obs.NotObtained(key, time.Since(start), err)
		return nil, err
	}
	c.obs.Obtained(key, time.Since(start))
	if l.waited {
		c.obs.Contended(key)
	}
	return l, nil
}

func (c *Client) obtain(ctx context.Context, key string, ttl, wait time.Duration) (*Lock, error) {
	budget := wait
	if wait <= 0 {
		budget = cleanupTimeout // for the round trips of one try
	}
	wctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	s, err := c.session(ttl)
	if err != nil {
		return nil, err
	}
	id, err := s.await(wctx)
	if err != nil {
		return nil, err
	}
	cl := &claim{c: c, s: s, parent: c.parent(key)}
	sent := time.Now()
	if err := cl.create(wctx); err != nil {
		return nil, c.failed(ctx, key, cl, err)
	}
	if err := cl.wait(wctx, wait <= 0); err != nil {
		return nil, c.failed(ctx, key, cl, err)
	}
	stat, err := call(wctx, func() (int64, error) {
		_, st, err := s.conn.Get(cl.node)
		if err != nil {
			return 0, err
		}
		if st.EphemeralOwner != id {
			return 0, fmt.Errorf("%w: the node belongs to session %x, not %x", errNodeGone, st.EphemeralOwner, id)
		}
		return st.Czxid, nil
	})
	if err != nil {
		return nil, c.failed(ctx, key, cl, err)
	}
	l := &Lock{c: c, s: s, key: key, node: cl.node, fence: stat, sent: sent, at: time.Now(), waited: cl.waited}
	l.lost, l.lose = context.WithCancelCause(context.Background())
	if err := s.hold(l, id); err != nil {
		l.lose(nil)
		return nil, c.failed(ctx, key, cl, err)
	}
	return l, nil
}

// failed removes a failed claim's node, if any (in the background if ZooKeeper does not
// confirm it at once), and tells busy from down: a try that found the lock held, or a wait that
// ran out while ZooKeeper answered, is ErrNotObtained; the rest ErrUnavailable. A wait that
// ctx ended matches ctx's error too.
func (c *Client) failed(ctx context.Context, key string, cl *claim, err error) error {
	cl.forgetSoon()
	switch {
	case errors.Is(err, ErrUnavailable) || errors.Is(err, ErrClosed):
		return err
	case errors.Is(err, errLocked):
		return fmt.Errorf("%w: %s: %w", ErrNotObtained, key, err)
	case ctx.Err() != nil:
		return fmt.Errorf("%w: %s: %w", ErrNotObtained, key, context.Cause(ctx))
	case cl.waiting && !errors.Is(err, errNodeGone):
		if cl.s.connected(cl.id) {
			return fmt.Errorf("%w: %s: held by others: %w", ErrNotObtained, key, err)
		}
	}
	return fmt.Errorf("%w: lock %s: %w", ErrUnavailable, key, err)
}

// Release deletes the lock's node, granting the next waiter; only the first call does
// anything. It returns an error wrapping ErrLost if the lock was lost, or ErrUnavailable if
// ZooKeeper did not confirm within ctx; either way the node is deleted in the background (see forget).
func (l *Lock) Release(ctx context.Context) error {
	l.release.Do(func() {
		defer func() { l.c.obs.Released(l.key, time.Since(l.at), l.relErr) }()
		l.s.unhold(l)
		cl := &claim{c: l.c, s: l.s, parent: l.c.parent(l.key), node: l.node}
		if cause := context.Cause(l.lost); cause != nil {
			l.relErr = cause
			go cl.forget()
			return
		}
		l.lose(nil) // stops the watch; context.Cause(l.lost) is now context.Canceled
		if err := cl.remove(ctx); err != nil {
			l.relErr = fmt.Errorf("%w: release %s: %w", ErrUnavailable, l.key, err)
			go cl.forget()
		}
	})
	return l.relErr
}
