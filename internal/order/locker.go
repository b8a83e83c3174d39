package order

import (
	"context"
	"time"

	"github.com/seckill/seckill/internal/dlock"
)

// Locker is the lock the dlock strategy holds on each product it writes: RedisLocker here,
// etcd's and ZooKeeper's adapted by internal/app. Its errors match ErrBusy or
// dlock.ErrNotObtained (not obtained in time), ErrLockLost or dlock.ErrLost (lost while held,
// also fn's context's cause), or ErrUnavailable or IsUnavailable (backend down).
type Locker interface {
	// Do obtains key's lock with a lease of ttl, waiting up to wait (in arrival order across
	// processes when fair), runs fn on a context that is cancelled if the lock is lost, and
	// releases the lock. Its error is fn's, joined with the loss if there was one.
	Do(ctx context.Context, key string, ttl, wait time.Duration, fair bool, fn func(ctx context.Context, l HeldLock) error) error
	// DoMulti is Do for several keys, all or nothing; fn gets each key's held lock.
	DoMulti(ctx context.Context, keys []string, ttl, wait time.Duration, fn func(ctx context.Context, locks map[string]HeldLock) error) error
}

// HeldLock is a product lock while its holder writes.
type HeldLock interface {
	// Fence is the lock's fencing token: a later holder's is larger.
	Fence() int64
	// RaiseFence makes Fence a new token above floor while the lock is still held: for a
	// lock whose store lost fences it gave out, that the product has seen (floor). An error
	// (the lock lost, a backend that cannot raise) leaves Fence as it was.
	RaiseFence(ctx context.Context, floor int64) (int64, error)
	// NextWaiterSince is when the lock's next waiter began to wait, if the lock knows it (a
	// fair Redis lock does), so that a batch serves only the buyers who came before it.
	NextWaiterSince() (time.Time, bool)
}

// WriteWatcher is a HeldLock told of each write under it, such as a lock history's decorator
// of a Locker (internal/labapi). Writing is called just before the write; the func it returns,
// with the write's error once it is over, COMMIT included.
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

// EtcdFenceBase is added to an etcd lock's fence (its key's create revision) before a product's
// row records it, putting every etcd fence above every Redis fence. See
// docs/deployment.md#product-locks-in-etcd.
const EtcdFenceBase int64 = 1 << 52

// ZooKeeperFenceBase is added to a ZooKeeper lock's fence (its node's creation zxid) before a
// product's row records it, putting it above every etcd and Redis fence. See
// docs/dlock.md#which-lock-service.
const ZooKeeperFenceBase int64 = 1 << 62
