package dlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// MultiLock is several keys held together, taken by ObtainMulti.
type MultiLock struct {
	locks  []*Lock                 // in the order of their keys
	cancel context.CancelCauseFunc // cancels Watch's context; nil until Watch
}

// ObtainMulti takes every key of keys or none, in sorted order so that overlapping calls cannot
// deadlock, within opt.Wait for the whole call (docs/dlock.md#several-keys-at-once). It refuses
// empty or repeated keys and Options.Fair; on an error it releases the keys it took.
func (c *Client) ObtainMulti(ctx context.Context, keys []string, ttl time.Duration, opt *Options) (*MultiLock, error) {
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	switch {
	case len(sorted) == 0:
		return nil, errors.New("dlock: ObtainMulti needs at least one key")
	case repeats(sorted):
		return nil, fmt.Errorf("dlock: ObtainMulti: a key appears twice in %q", keys)
	case opt != nil && opt.Fair:
		return nil, errors.New("dlock: ObtainMulti does not take fair locks")
	}
	var o Options
	if opt != nil {
		o = *opt
	}
	deadline := time.Now().Add(o.Wait)
	m := &MultiLock{}
	for _, key := range sorted {
		ko := o
		if o.Wait > 0 {
			ko.Wait = max(time.Until(deadline), time.Millisecond)
		}
		l, err := c.Obtain(ctx, key, ttl, &ko)
		if err != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			_ = m.Release(rctx) // what it cannot release expires after ttl
			cancel()
			return nil, err
		}
		m.locks = append(m.locks, l)
	}
	return m, nil
}

// Locks returns the locks, in the sorted order of their keys.
func (m *MultiLock) Locks() []*Lock { return slices.Clone(m.locks) }

// Watch starts the watchdog of every lock and returns a context derived from ctx that is
// cancelled when any of them is lost (with that lock's cause, which wraps ErrLost), or when
// the locks are released. Call it once.
func (m *MultiLock) Watch(ctx context.Context) context.Context {
	mctx, cancel := context.WithCancelCause(ctx)
	m.cancel = cancel
	for _, l := range m.locks {
		wctx := l.Watch(ctx)
		context.AfterFunc(wctx, func() { cancel(context.Cause(wctx)) })
	}
	return mctx
}

// Release releases every lock and returns their errors joined: ErrNotHeld for one lost or
// expired, and other failures.
func (m *MultiLock) Release(ctx context.Context) error {
	var errs []error
	for _, l := range m.locks {
		if err := l.Release(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", l.Key(), err))
		}
	}
	if m.cancel != nil {
		m.cancel(context.Canceled)
	}
	return errors.Join(errs...)
}

// repeats reports whether sorted holds a key twice (next to each other, being sorted).
func repeats(sorted []string) bool {
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			return true
		}
	}
	return false
}

// DoMulti is Do for several keys: it takes them with ObtainMulti, runs fn on the MultiLock's
// watched context (cancelled if any key is lost), and releases them, also on panic. Its
// error is fn's, joined with a cause wrapping ErrLost if a key was lost while fn ran.
func (c *Client) DoMulti(ctx context.Context, keys []string, ttl time.Duration, opt *Options,
	fn func(ctx context.Context, m *MultiLock) error,
) (err error) {
	m, err := c.ObtainMulti(ctx, keys, ttl, opt)
	if err != nil {
		return err
	}
	return runWatched(ctx, m.Watch(ctx), m.Release, func(wctx context.Context) error { return fn(wctx, m) })
}
