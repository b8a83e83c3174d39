package etcdlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.etcd.io/etcd/client/v3/concurrency"
)

// Lock is a held lock. Its methods are safe for concurrent use.
type Lock struct {
	c       *Client
	key     string
	fence   int64
	m       *mutex
	s       *concurrency.Session
	sent    time.Time // when its claim was sent
	at      time.Time
	lost    context.Context // cancelled, with a cause wrapping ErrLost, when the lease ends
	lose    context.CancelCauseFunc
	release sync.Once
	relErr  error
}

// Key is the lock's name.
func (l *Lock) Key() string { return l.key }

// Acquired returns when the lock's claim was sent to etcd (its key written, after the
// process's own queue): the lock was granted after it, once every older claim was gone.
func (l *Lock) Acquired() time.Time { return l.sent }

// Fence is the lock's fencing token, its key's create revision in etcd: a later holder's is
// always larger.
func (l *Lock) Fence() int64 { return l.fence }

// Watch returns a context derived from ctx that is cancelled, with a cause wrapping ErrLost,
// if the lock's lease ends while it is held: the keep-alive found it expired, or got no
// answer for a whole TTL.
func (l *Lock) Watch(ctx context.Context) context.Context {
	wctx, cancel := context.WithCancelCause(ctx)
	context.AfterFunc(l.lost, func() {
		if cause := context.Cause(l.lost); errors.Is(cause, ErrLost) { // not a release
			cancel(cause)
		}
	})
	return wctx
}

// Obtain takes the lock named key with a lease of ttl (rounded up to whole seconds; etcd
// may raise it to its minimum), waiting up to wait for the holders before it; wait <= 0
// tries once. See the package doc for the errors.
func (c *Client) Obtain(ctx context.Context, key string, ttl, wait time.Duration) (*Lock, error) {
	start := time.Now()
	l, err := c.obtain(ctx, key, ttl, wait)
	if err != nil {
		c.obs.NotObtained(key, time.Since(start), err)
		return nil, err
	}
	c.obs.Obtained(key, time.Since(start))
	if l.m.waited {
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
	if err := c.enter(wctx, key, wait > 0); err != nil {
		return nil, c.notObtained(ctx, key, "queued in this process", err)
	}
	s, err := c.session(wctx, ttl)
	if err != nil {
		c.queues.Unlock(key)
		return nil, err
	}
	m := newMutex(s, key)
	sent := time.Now()
	if err := m.lock(wctx, wait <= 0); err != nil {
		c.forgetSoon(key, s, m) // the key's place in the process is held until it is done
		if errors.Is(err, errLocked) || (wait > 0 && wctx.Err() != nil && !errors.Is(err, errKeyGone)) {
			return nil, c.notObtained(ctx, key, "held by others", err)
		}
		return nil, fmt.Errorf("%w: lock %s: %w", ErrUnavailable, key, err)
	}
	l := &Lock{c: c, key: key, m: m, s: s, sent: sent, at: time.Now(), fence: m.rev}
	l.lost, l.lose = context.WithCancelCause(context.Background())
	go l.watch()
	return l, nil
}

// notObtained tells busy from down once a wait ran out: if etcd serves a read now, the
// lock was busy (ErrNotObtained); if not, ErrUnavailable. A wait that ctx ended matches
// ctx's error too.
func (c *Client) notObtained(ctx context.Context, key, where string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w: %s: %w", ErrNotObtained, key, context.Cause(ctx))
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
	defer cancel()
	if perr := c.Ping(pctx); perr != nil {
		return fmt.Errorf("lock %s: %w", key, perr)
	}
	return fmt.Errorf("%w: %s: %s: %w", ErrNotObtained, key, where, err)
}

// forget deletes the key a failed lock or release may have left, retrying after 50 ms
// doubling to 1 s until etcd confirms it, the lease ends or the Client closes, then gives the
// key's place in the process to the next goroutine, so a late deletion cannot take a newer
// claim's key. If etcd refuses the deletion for forgetTimeout, it retires the session and the
// locks under it. See docs/deployment.md#product-locks-in-etcd.
func (c *Client) forget(key string, s *concurrency.Session, m *mutex) {
	defer c.queues.Unlock(key)
	giveUp := time.Now().Add(forgetTimeout)
	for backoff := 50 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		ctx, cancel := context.WithTimeout(c.ctx, cleanupTimeout)
		err := m.unlock(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(giveUp) {
			c.retire(s)
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-s.Done():
			t.Stop()
			return
		case <-c.ctx.Done():
			t.Stop()
			return
		}
	}
}

// forgetSoon is forget for an Obtain that failed, with its first try in the caller, for
// forgetNowTimeout at most: etcd usually answers at once, and the process's next Obtain of
// the key, which waits for nothing when it is a try, then finds the key's place free (with
// the deletion in the background, TestObtainRelease's try right after a release lost that
// race on a loaded machine, refused as "queued in this process").
func (c *Client) forgetSoon(key string, s *concurrency.Session, m *mutex) {
	ctx, cancel := context.WithTimeout(c.ctx, forgetNowTimeout)
	err := m.unlock(ctx)
	cancel()
	if err == nil {
		c.queues.Unlock(key)
		return
	}
	go c.forget(key, s, m)
}

// watch reports the loss of the lock when its session's lease ends before the release.
func (l *Lock) watch() {
	select {
	case <-l.s.Done():
		cause := fmt.Errorf("%w: %s: the lease ended (expired, revoked, or its keep-alive got no answer for a TTL)", ErrLost, l.key)
		l.lose(cause)
		l.c.retire(l.s)
		if context.Cause(l.lost) == cause { // not released meanwhile
			l.c.obs.Lost(l.key, cause)
		}
	case <-l.lost.Done(): // released
	}
}

// Release deletes the lock's key, granting the lock to the next waiter; only the first call does
// anything. It returns an error wrapping ErrLost if the lease had ended, or ErrUnavailable if etcd
// did not confirm the deletion within ctx, and then deletes the key in the background, keeping the
// process's other locks.
func (l *Lock) Release(ctx context.Context) error {
	l.release.Do(func() {
		defer func() { l.c.obs.Released(l.key, time.Since(l.at), l.relErr) }()
		if cause := context.Cause(l.lost); cause != nil {
			l.relErr = cause // the key went with the lease
			l.c.queues.Unlock(l.key)
			return
		}
		l.lose(nil) // stops the watch; context.Cause(l.lost) is now context.Canceled
		if err := l.m.unlock(ctx); err != nil {
			l.relErr = fmt.Errorf("%w: release %s: %w", ErrUnavailable, l.key, err)
			go l.c.forget(l.key, l.s, l.m) // gives the key's place in the process back once done
			return
		}
		l.c.queues.Unlock(l.key)
	})
	return l.relErr
}
