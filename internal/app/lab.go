package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/etcdlock"
	"github.com/seckill/seckill/internal/lab"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/zklock"
)

// labLocks is the order.LabLocker of the oversell lab (internal/lab, docs/lab.md), wired in
// from here so that the purchase service knows nothing of the lab. Its locks, and the lock
// clients they need (a dlock client on the API's Redis, an etcd or ZooKeeper lock client when
// the process has one), are built on the first purchase of a lab product, once: a process that
// sells no lab product builds none of them. The postgres locks hold their sessions from the
// API's own pool. It is safe for concurrent use.
type labLocks struct {
	rdb  redis.UniversalClient
	etcd *clientv3.Client // nil: the lab's etcd lock answers unavailable (lab.ErrNoEtcd)
	pg   *sql.DB
	zk   []string // ZooKeeper's members; none: the lab's zookeeper locks answer unavailable

	mu      sync.Mutex
	closed  bool
	locks   *lab.Locks // nil until the first lab purchase
	dlocks  *dlock.Client
	etcdLks *etcdlock.Client
	zkLks   *zklock.Client
}

// errLabClosed is a lab purchase that reaches a process shutting down.
var errLabClosed = fmt.Errorf("%w: the lab's locks are closed: the process is shutting down", order.ErrUnavailable)

// get returns the lab's locks, building them on the first call.
func (l *labLocks) get() (*lab.Locks, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errLabClosed
	}
	if l.locks == nil {
		l.dlocks = dlock.New(l.rdb, nil)
		if l.etcd != nil {
			l.etcdLks = etcdlock.New(l.etcd, nil)
		}
		if len(l.zk) > 0 {
			l.zkLks = zklock.New(l.zk, zklock.Options{Root: "/seckill/lab"})
		}
		l.locks = lab.New(l.rdb, lab.Clients{Dlocks: l.dlocks, Etcd: l.etcdLks, Postgres: l.pg, ZooKeeper: l.zkLks})
	}
	return l.locks, nil
}

// Acquire takes lab lock name on key (see lab.Locks.Acquire), in order.LabLocker's terms: an
// etcd lock's errors as etcdErr says, and a loss as the cause of the holder's context that
// matches order.ErrLockLost.
func (l *labLocks) Acquire(ctx context.Context, name, key string, lease, wait time.Duration) (order.LabLock, error) {
	locks, err := l.get()
	if err != nil {
		return order.LabLock{}, err
	}
	h, err := locks.Acquire(ctx, name, key, lease, wait)
	if err != nil {
		return order.LabLock{}, zkErr(etcdErr(err))
	}
	hctx, stop := lossAs(ctx, h.Ctx)
	return order.LabLock{Ctx: hctx, Fence: h.Fence, Token: h.Token, Tried: h.Tried,
		Release: func(ctx context.Context) error {
			stop()
			return zkErr(etcdErr(h.Release(ctx)))
		}}, nil
}

// Close closes the lock clients the lab built, if it built them; a lab purchase after Close
// is unavailable.
func (l *labLocks) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.locks == nil {
		return nil
	}
	errs := []error{l.dlocks.Close()}
	if l.etcdLks != nil {
		errs = append(errs, l.etcdLks.Close())
	}
	if l.zkLks != nil {
		errs = append(errs, l.zkLks.Close())
	}
	return errors.Join(errs...)
}
