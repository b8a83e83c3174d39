// Package lockrun runs a function under locks of any lock service (internal/etcdlock,
// internal/zklock): it takes them, watches them for loss and releases them, also on panic.
package lockrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Held is a lock as the lock packages give it: Watch returns a context that ends when the
// lock is lost, Release lets it go.
type Held interface {
	Watch(ctx context.Context) context.Context
	Release(ctx context.Context) error
}

// Spec says how to take one key (Obtain, within wait) and what the package's loss is (Lost,
// which Run joins to fn's error) and how long a release may take (Cleanup).
type Spec[L Held] struct {
	Obtain  func(ctx context.Context, key string, wait time.Duration) (L, error)
	Lost    error
	Cleanup time.Duration
}

// Do obtains key, runs fn on the lock's watched context and releases it. It returns Obtain's
// error, or fn's joined with Lost if the lock was lost meanwhile.
func Do[L Held](ctx context.Context, s Spec[L], key string, wait time.Duration, fn func(context.Context, L) error) error {
	l, err := s.Obtain(ctx, key, wait)
	if err != nil {
		return err
	}
	return s.run(ctx, l.Watch(ctx), []L{l}, func(wctx context.Context) error { return fn(wctx, l) })
}

// DoMulti is Do for several keys, all or nothing, taken in sorted order within one wait; fn
// gets the locks in that order, on a context cancelled if any is lost. A key named twice is
// an error.
func DoMulti[L Held](ctx context.Context, s Spec[L], keys []string, wait time.Duration, fn func(context.Context, []L) error) error {
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	if len(slices.Compact(slices.Clone(sorted))) != len(sorted) {
		return fmt.Errorf("lockrun: a key is named twice in %q", keys)
	}
	deadline := time.Now().Add(wait)
	locks := make([]L, 0, len(sorted))
	for _, key := range sorted {
		l, err := s.Obtain(ctx, key, time.Until(deadline))
		if err != nil {
			return errors.Join(err, s.releaseAll(ctx, locks))
		}
		locks = append(locks, l)
	}
	wctx := ctx
	for _, l := range locks {
		wctx = l.Watch(wctx)
	}
	return s.run(ctx, wctx, locks, func(wctx context.Context) error { return fn(wctx, locks) })
}

// run runs fn on wctx, the watched context of locks, then releases them, also when fn
// panics. Its error is fn's, joined with the cause of a loss.
func (s Spec[L]) run(ctx, wctx context.Context, locks []L, fn func(context.Context) error) (err error) {
	defer func() {
		relErr := s.releaseAll(ctx, locks)
		if cause := context.Cause(wctx); errors.Is(cause, s.Lost) {
			err = errors.Join(err, cause)
		} else if errors.Is(relErr, s.Lost) {
			err = errors.Join(err, relErr)
		}
	}()
	return fn(wctx)
}

// releaseAll releases locks on a fresh context bounded to Cleanup.
func (s Spec[L]) releaseAll(ctx context.Context, locks []L) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.Cleanup)
	defer cancel()
	var errs []error
	for _, l := range locks {
		errs = append(errs, l.Release(rctx))
	}
	return errors.Join(errs...)
}
