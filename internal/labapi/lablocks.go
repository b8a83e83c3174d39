package labapi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/etcdlock"
	"github.com/seckill/seckill/internal/lab"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/zklock"
)

// labLocks takes the oversell lab's locks (internal/lab, docs/lab.md) for the lab strategy,
// in the purchase service's terms (heldLab). Its locks, and the lock clients they need (a
// dlock client on the API's Redis, an etcd or ZooKeeper lock client when the process has
// one), are built on the first purchase of a lab product, once: a process that sells no lab
// product builds none of them. The postgres locks hold their sessions from the API's own
// pool. It is safe for concurrent use.
type labLocks struct {
	rdb  redis.UniversalClient
	etcd *clientv3.Client // nil: the lab's etcd lock answers unavailable (lab.ErrNoEtcd)
	pg   *gorm.DB
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
		pg, err := l.pg.DB() // gorm's pool itself: a postgres lock holds one of its sessions
		if err != nil {
			return nil, err
		}
		l.dlocks = dlock.New(l.rdb, nil)
		if l.etcd != nil {
			l.etcdLks = etcdlock.New(l.etcd, nil)
		}
		if len(l.zk) > 0 {
			l.zkLks = zklock.New(l.zk, zklock.Options{Root: "/seckill/lab"})
		}
		l.locks = lab.New(l.rdb, lab.Clients{Dlocks: l.dlocks, Etcd: l.etcdLks, Postgres: pg, ZooKeeper: l.zkLks})
	}
	return l.locks, nil
}

// heldLab is a lab lock while its holder has it, in the purchase service's terms.
type heldLab struct {
	// Ctx is the context the holder works on: cancelled when the lock is lost (for the
	// locks that know it), with a cause that matches order.ErrLockLost.
	Ctx context.Context
	// Fence is the lock's fencing token, which the holder's read and write check; 0: none.
	Fence int64
	// Token is the lock's value where it is unique to the grant; empty: none.
	Token string
	// Tried is when the attempt that got the lock began; zero: unknown.
	Tried time.Time
	// Release gives the lock back the way this lock does it (which, for some, is the flaw).
	Release func(ctx context.Context) error
}

// Acquire takes lab lock name on key (see lab.Locks.Acquire), in the service's terms: an
// etcd or ZooKeeper lock's errors as app.EtcdErr and app.ZooKeeperErr say, and a loss as the cause of the holder's context that
// matches order.ErrLockLost.
func (l *labLocks) Acquire(ctx context.Context, name, key string, lease, wait time.Duration) (heldLab, error) {
	locks, err := l.get()
	if err != nil {
		return heldLab{}, err
	}
	h, err := locks.Acquire(ctx, name, key, lease, wait)
	if err != nil {
		return heldLab{}, app.ZooKeeperErr(app.EtcdErr(err))
	}
	hctx, stop := app.LossAs(ctx, h.Ctx)
	return heldLab{Ctx: hctx, Fence: h.Fence, Token: h.Token, Tried: h.Tried,
		Release: func(ctx context.Context) error {
			stop()
			return app.ZooKeeperErr(app.EtcdErr(h.Release(ctx)))
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
