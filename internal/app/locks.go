package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/etcdlock"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/zklock"
)

// etcdLocker is the order.Locker of product locks in etcd (LOCK_BACKEND=etcd), through c. An
// etcd lock is always fair: its waiters are served in the order of their keys' revisions.
type etcdLocker struct{ c *etcdlock.Client }

func (e etcdLocker) Do(ctx context.Context, key string, ttl, wait time.Duration, _ bool,
	fn func(ctx context.Context, l order.HeldLock) error,
) error {
	err := e.c.Do(ctx, key, ttl, wait, func(wctx context.Context, l *etcdlock.Lock) error {
		lctx, stop := LossAs(ctx, wctx)
		defer stop()
		return fn(lctx, etcdHeld{l})
	})
	return EtcdErr(err)
}

func (e etcdLocker) DoMulti(ctx context.Context, keys []string, ttl, wait time.Duration,
	fn func(ctx context.Context, locks map[string]order.HeldLock) error,
) error {
	err := e.c.DoMulti(ctx, keys, ttl, wait, func(wctx context.Context, locks []*etcdlock.Lock) error {
		held := make(map[string]order.HeldLock, len(keys))
		for _, l := range locks {
			held[l.Key()] = etcdHeld{l}
		}
		lctx, stop := LossAs(ctx, wctx)
		defer stop()
		return fn(lctx, held)
	})
	return EtcdErr(err)
}

// etcdHeld is a held etcd lock. Its next waiter's arrival is not known (it would cost a read
// per batch), so a batch takes every buyer waiting in the process.
type etcdHeld struct{ l *etcdlock.Lock }

func (h etcdHeld) Fence() int64 { return order.EtcdFenceBase + h.l.Fence() }

// Acquired is when the lock's claim was sent (a lock history's grant took effect after it).
func (h etcdHeld) Acquired() time.Time { return h.l.Acquired() }

func (etcdHeld) NextWaiterSince() (time.Time, bool) { return time.Time{}, false }

// errEtcdFence is an etcd lock's RaiseFence error: its fence is a revision of etcd's
// replicated log, which a majority never loses, so a product that refused it was written by a
// newer holder.
var errEtcdFence = errors.New("an etcd lock's fence, a revision, cannot be raised")

func (etcdHeld) RaiseFence(context.Context, int64) (int64, error) { return 0, errEtcdFence }

// EtcdErr is an etcd lock's err, still in the chain, matching order.ErrBusy (not obtained),
// order.ErrLockLost (lost) or order.ErrUnavailable (etcd down or the client closed).
func EtcdErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, etcdlock.ErrLost):
		return errors.Join(order.ErrLockLost, err)
	case errors.Is(err, etcdlock.ErrNotObtained):
		return fmt.Errorf("%w: %w", order.ErrBusy, err)
	case errors.Is(err, etcdlock.ErrUnavailable), errors.Is(err, etcdlock.ErrClosed):
		return fmt.Errorf("%w: %w", order.ErrUnavailable, err)
	}
	return err
}

// LossAs returns ctx, cancelled with order.ErrLockLost joined to the loss when watched ends
// with a lock's loss (etcdlock's, dlock's or zklock's ErrLost), and nothing else of watched;
// stop ends the watch.
func LossAs(ctx, watched context.Context) (lctx context.Context, stop func()) {
	lctx, cancel := context.WithCancelCause(ctx)
	stopWatch := context.AfterFunc(watched, func() {
		if cause := context.Cause(watched); errors.Is(cause, etcdlock.ErrLost) || errors.Is(cause, dlock.ErrLost) || errors.Is(cause, zklock.ErrLost) {
			cancel(errors.Join(order.ErrLockLost, cause))
		}
	})
	return lctx, func() {
		stopWatch()
		cancel(context.Canceled)
	}
}
