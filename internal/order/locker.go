package order

import (
	"context"
	"time"

	"github.com/seckill/seckill/internal/dlock"
)

// Locker is the dlock strategy's product lock. Errors: ErrBusy or dlock.ErrNotObtained (not
// obtained), ErrLockLost or dlock.ErrLost (lost), ErrUnavailable or IsUnavailable (down).
type Locker interface {
	// Do runs fn holding key's lock for ttl, waiting up to wait (in arrival order if fair),
	// then releases it; fn's ctx ends if the lock is lost. Its error is fn's, joined with the loss.
	Do(ctx context.Context, key string, ttl, wait time.Duration, fair bool, fn func(ctx context.Context, l HeldLock) error) error
	// DoMulti is Do for several keys, all or nothing; fn gets each key's held lock.
	DoMulti(ctx context.Context, keys []string, ttl, wait time.Duration, fn func(ctx context.Context, locks map[string]HeldLock) error) error
}

// HeldLock is a product lock while its holder writes.
type HeldLock interface {
	// Fence is the lock's fencing token: a later holder's is larger.
	Fence() int64
	// RaiseFence makes Fence a token above floor; on error Fence is unchanged.
	RaiseFence(ctx context.Context, floor int64) (int64, error)
	// NextWaiterSince is when the next waiter began to wait, if known (fair Redis locks).
	NextWaiterSince() (time.Time, bool)
}

// WriteWatcher is a HeldLock told of each write: Writing before it, the returned func after
// COMMIT with its error.
type WriteWatcher interface {
	Writing() (written func(err error))
}

// writing is l's Writing, if l is a WriteWatcher.
func writing(l HeldLock) (written func(err error)) {
	if w, ok := l.(WriteWatcher); ok {
		return w.Writing()
	}
	return func(error) {}
}

// RedisLocker is the Locker of locks in Redis (or Redlock), through c.
func RedisLocker(c *dlock.Client) Locker { return redisLocker{c} }

type redisLocker struct{ c *dlock.Client }

func (r redisLocker) Do(ctx context.Context, key string, ttl, wait time.Duration, fair bool,
	fn func(ctx context.Context, l HeldLock) error,
) error {
	return r.c.Do(ctx, key, ttl, &dlock.Options{Wait: wait, Fair: fair},
		func(ctx context.Context, l *dlock.Lock) error { return fn(ctx, l) })
}

func (r redisLocker) DoMulti(ctx context.Context, keys []string, ttl, wait time.Duration,
	fn func(ctx context.Context, locks map[string]HeldLock) error,
) error {
	return r.c.DoMulti(ctx, keys, ttl, &dlock.Options{Wait: wait}, func(ctx context.Context, m *dlock.MultiLock) error {
		locks := make(map[string]HeldLock, len(keys))
		for _, l := range m.Locks() {
			locks[l.Key()] = l
		}
		return fn(ctx, locks)
	})
}

// EtcdFenceBase is added to an etcd lock's fence, above every Redis fence.
const EtcdFenceBase int64 = 1 << 52

// ZooKeeperFenceBase is added to a ZooKeeper lock's fence, above every etcd and Redis fence.
const ZooKeeperFenceBase int64 = 1 << 62
