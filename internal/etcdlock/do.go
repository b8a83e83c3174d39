package etcdlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Do obtains the lock, runs fn on its watched context (see Lock.Watch), and releases it, also
// on panic. It returns Obtain's error, or fn's joined with ErrLost if the lock was lost
// meanwhile; a failed release goes to the Observer (see Lock.Release).
func (c *Client) Do(ctx context.Context, key string, ttl, wait time.Duration,
	fn func(ctx context.Context, l *Lock) error,
) error {
	l, err := c.Obtain(ctx, key, ttl, wait)
	if err != nil {
		return err
	}
	return runWatched(ctx, l.Watch(ctx), []*Lock{l}, func(wctx context.Context) error { return fn(wctx, l) })
}

// DoMulti is Do for several keys, all or nothing, taken in sorted order within one wait; fn
// gets the locks in that order, on a context cancelled if any is lost.
func (c *Client) DoMulti(ctx context.Context, keys []string, ttl, wait time.Duration,
	fn func(ctx context.Context, locks []*Lock) error,
) error {
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	if len(slices.Compact(slices.Clone(sorted))) != len(sorted) {
		return fmt.Errorf("etcdlock: a key is named twice in %q", keys)
	}
	deadline := time.Now().Add(wait)
	locks := make([]*Lock, 0, len(sorted))
	for _, key := range sorted {
		l, err := c.Obtain(ctx, key, ttl, time.Until(deadline))
		if err != nil {
			return errors.Join(err, releaseAll(ctx, locks))
		}
		locks = append(locks, l)
	}
	wctx := ctx
	for _, l := range locks {
		wctx = l.Watch(wctx)
	}
	return runWatched(ctx, wctx, locks, func(wctx context.Context) error { return fn(wctx, locks) })
}

// runWatched runs fn on wctx, the watched context of locks, then releases them, also when
// fn panics. Its error is fn's, joined with the cause of a loss.
func runWatched(ctx, wctx context.Context, locks []*Lock, fn func(context.Context) error) (err error) {
	defer func() {
		relErr := releaseAll(ctx, locks)
		if cause := context.Cause(wctx); errors.Is(cause, ErrLost) {
			err = errors.Join(err, cause)
		} else if errors.Is(relErr, ErrLost) {
			err = errors.Join(err, relErr)
		}
	}()
	return fn(wctx)
}

// releaseAll releases locks on a fresh context bounded to cleanupTimeout.
func releaseAll(ctx context.Context, locks []*Lock) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	var errs []error
	for _, l := range locks {
		errs = append(errs, l.Release(rctx))
	}
	return errors.Join(errs...)
}
