package etcdlock

import (
	"context"
	"time"

	"github.com/seckill/seckill/internal/lockrun"
)

// Do obtains the lock, runs fn on its watched context (see Lock.Watch), and releases it on a
// fresh few-second context, also on panic. It returns Obtain's error, or fn's joined with
// ErrLost if the lock was lost meanwhile; a failed release goes to the Observer.
func (c *Client) Do(ctx context.Context, key string, ttl, wait time.Duration,
	fn func(ctx context.Context, l *Lock) error,
) error {
	return lockrun.Do(ctx, c.spec(ttl), key, wait, fn)
}

// DoMulti is Do for several keys, all or nothing, taken in sorted order within one wait; fn
// gets the locks in that order, on a context cancelled if any is lost.
func (c *Client) DoMulti(ctx context.Context, keys []string, ttl, wait time.Duration,
	fn func(ctx context.Context, locks []*Lock) error,
) error {
	return lockrun.DoMulti(ctx, c.spec(ttl), keys, wait, fn)
}

// spec is how lockrun takes this client's locks of ttl.
func (c *Client) spec(ttl time.Duration) lockrun.Spec[*Lock] {
	return lockrun.Spec[*Lock]{
		Obtain: func(ctx context.Context, key string, wait time.Duration) (*Lock, error) {
			return c.Obtain(ctx, key, ttl, wait)
		},
		Lost:    ErrLost,
		Cleanup: cleanupTimeout,
	}
}
