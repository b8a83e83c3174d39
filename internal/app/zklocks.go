package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/zklock"
)

// ZooKeeperConfig is where the product locks live with LOCK_BACKEND=zookeeper.
type ZooKeeperConfig struct {
	Servers []string // host:port of each member; empty: not in ZooKeeper
	// SessionTimeout is the session every lock is held in (zklock.Options); zero: the lock's
	// lease (LOCK_TTL), as with etcd.
	SessionTimeout time.Duration
}

// zkLocker is the order.Locker of product locks in ZooKeeper (LOCK_BACKEND=zookeeper), through
// c. A ZooKeeper lock is always fair: its waiters are served in the order of their nodes.
type zkLocker struct{ c *zklock.Client }

func (z zkLocker) Do(ctx context.Context, key string, ttl, wait time.Duration, _ bool,
	fn func(ctx context.Context, l order.HeldLock) error,
) error {
	err := z.c.Do(ctx, key, ttl, wait, func(wctx context.Context, l *zklock.Lock) error {
		lctx, stop := LossAs(ctx, wctx)
		defer stop()
		return fn(lctx, zkHeld{l})
	})
	return zkErr(err)
}

func (z zkLocker) DoMulti(ctx context.Context, keys []string, ttl, wait time.Duration,
	fn func(ctx context.Context, locks map[string]order.HeldLock) error,
) error {
	err := z.c.DoMulti(ctx, keys, ttl, wait, func(wctx context.Context, locks []*zklock.Lock) error {
		held := make(map[string]order.HeldLock, len(keys))
		for _, l := range locks {
			held[l.Key()] = zkHeld{l}
		}
		lctx, stop := LossAs(ctx, wctx)
		defer stop()
		return fn(lctx, held)
	})
	return zkErr(err)
}

// zkHeld is a held ZooKeeper lock. Like etcdHeld, it does not know its next waiter's arrival.
type zkHeld struct{ l *zklock.Lock }

func (h zkHeld) Fence() int64 { return order.ZooKeeperFenceBase + h.l.Fence() }

// Acquired is when the lock's claim (its node) was sent.
func (h zkHeld) Acquired() time.Time { return h.l.Acquired() }

func (zkHeld) NextWaiterSince() (time.Time, bool) { return time.Time{}, false }

// errZKFence is a ZooKeeper lock's RaiseFence error: its fence is a zxid of the ensemble's
// replicated log, which a quorum never loses, so a product that refused it was written by a
// newer holder.
var errZKFence = errors.New("a ZooKeeper lock's fence, a zxid, cannot be raised")

func (zkHeld) RaiseFence(context.Context, int64) (int64, error) { return 0, errZKFence }

// ZooKeeperErr is a ZooKeeper lock's err in order.Locker's terms, as EtcdErr; the lab's
// zookeeper locks use it too.
func ZooKeeperErr(err error) error { return zkErr(err) }

// zkErr is err, a ZooKeeper lock's, in the terms of order.Locker, as EtcdErr says.
func zkErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, zklock.ErrLost):
		return errors.Join(order.ErrLockLost, err)
	case errors.Is(err, zklock.ErrNotObtained):
		return fmt.Errorf("%w: %w", order.ErrBusy, err)
	case errors.Is(err, zklock.ErrUnavailable), errors.Is(err, zklock.ErrClosed):
		return fmt.Errorf("%w: %w", order.ErrUnavailable, err)
	}
	return err
}
