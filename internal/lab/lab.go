package lab

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/etcdlock"
	"github.com/seckill/seckill/internal/zklock"
)

// ExpireGap is the teaching delay of the setnx-expire lock between its SETNX and its EXPIRE:
// the two-command window in which a crash leaves a lock that never expires. Real code has the
// window too, a round trip wide; the delay makes a crash land in it reliably.
const ExpireGap = 100 * time.Millisecond

// Held is a lab lock while its holder has it.
type Held struct {
	// Ctx is the context the holder works on: cancelled when the lock is lost (dlock and
	// etcd only), otherwise the caller's.
	Ctx context.Context
	// Fence is the lock's fencing token, which the holder's reads and writes must check
	// (fence, dlock, etcd, postgres and zookeeper only); 0: none.
	Fence int64
	// Token is the value the lock wrote where it is unique to this grant (lease, watchdog,
	// fence, dlock, redsync, redislock, the name tags of etcd, postgres and zookeeper); empty
	// for the locks whose value is not
	// (none, mutex, setnx, setnx-expire, del). Lock histories name the grant by it.
	Token string
	// Tried is when the attempt that got the lock began (a lock that retries makes many):
	// the grant took effect after it. Lock histories take it as the grant's invoke, which
	// keeps the checker's search small: a grant whose interval spanned the whole wait could
	// be placed anywhere in it.
	Tried time.Time

	release func(ctx context.Context) error
}

// Release gives the lock back the way this lock does it (which, for some, is the flaw).
func (h Held) Release(ctx context.Context) error { return h.release(ctx) }

// Locks takes the lab's locks. It is safe for concurrent use.
type Locks struct {
	rdb       redis.UniversalClient
	dlocks    *dlock.Client
	redsync   *redsync.Redsync
	redislock *redislock.Client
	etcd      *etcdlock.Client // nil: the etcd lock answers ErrNoEtcd
	pg        *sql.DB          // nil: the postgres locks answer ErrNoPostgres
	zk        *zklock.Client   // nil: the zookeeper locks answer ErrNoZooKeeper
	mutexes   sync.Map         // key -> *mutexSlot: the mutex lock's per-process mutexes
	zkQueues  sync.Map         // key -> chan struct{}: the zookeeper locks' queue in this process
	owner     string
}

// Clients are the lock clients the lab's locks need besides Redis. The zero value has none:
// the locks that need one fail (see each field).
type Clients struct {
	// Dlocks is for the watchdog, fence and dlock locks; required for them.
	Dlocks *dlock.Client
	// Etcd is for the etcd lock; nil when the process has no etcd: that lock then fails
	// with ErrNoEtcd.
	Etcd *etcdlock.Client
	// Postgres is the pool whose sessions hold the postgres locks' advisory locks, on a
	// database migrated from db/ (its lab_lock_fence sequence); nil: those locks fail with
	// ErrNoPostgres.
	Postgres *sql.DB
	// ZooKeeper is for the zookeeper locks; nil when the process has no ZooKeeper: those
	// locks then fail with ErrNoZooKeeper.
	ZooKeeper *zklock.Client
}

// New returns the lab's locks over rdb, with c's clients for the locks that need them.
func New(rdb redis.UniversalClient, c Clients) *Locks {
	return &Locks{
		rdb: rdb, dlocks: c.Dlocks, etcd: c.Etcd, pg: c.Postgres, zk: c.ZooKeeper,
		redsync:   redsync.New(goredis.NewPool(rdb)),
		redislock: redislock.New(rdb),
		owner:     Owner(os.Getpid()),
	}
}

// Owner is the prefix of every lock value that process pid writes: "<pid>:".
func Owner(pid int) string { return strconv.Itoa(pid) + ":" }

// OwnerOf is the process id at the start of a lock value written by a lab lock (see Owner).
func OwnerOf(value string) (pid int, ok bool) {
	head, _, found := strings.Cut(value, ":")
	pid, err := strconv.Atoi(head)
	return pid, found && err == nil
}

// token returns a new lock value of this process: its owner prefix and 128 random bits.
func (l *Locks) token() string { return l.owner + rand.Text() }

// Acquire takes lock name (one of Names) on key with the given lease, waiting
// up to wait for it. An error that wraps dlock.ErrNotObtained (etcdlock.ErrNotObtained,
// zklock.ErrNotObtained for the etcd and zookeeper locks) means it was not had in time; one
// that wraps etcdlock.ErrUnavailable or zklock.ErrUnavailable, that etcd or ZooKeeper could not
// serve, or this process has none; any other is a failure of Redis, or of PostgreSQL.
func (l *Locks) Acquire(ctx context.Context, name, key string, lease, wait time.Duration) (Held, error) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var (
		h   Held
		err error
	)
	switch name {
	case "none":
		h = Held{Tried: time.Now(), release: nothing}
	case "mutex":
		h, err = l.mutex(wctx, key)
	case "setnx":
		h, err = l.setnx(wctx, key)
	case "setnx-expire":
		h, err = l.setnxExpire(wctx, key, lease)
	case "del":
		h, err = l.del(wctx, key, lease)
	case "lease":
		h, err = l.lease(wctx, key, lease)
	case "watchdog", "fence", "dlock":
		h, err = l.dlock(ctx, key, lease, wait, name)
	case "redsync":
		h, err = l.redsyncLock(wctx, key, lease)
	case "redislock":
		h, err = l.redislockLock(wctx, key, lease)
	case "etcd":
		h, err = l.etcdLock(ctx, key, lease, wait)
	case "postgres", "postgres-nofence":
		h, err = l.postgresLock(ctx, key, wait, name == "postgres")
	case "zookeeper", "zookeeper-nofence":
		h, err = l.zookeeperLock(ctx, key, lease, wait, name == "zookeeper")
	default:
		return Held{}, fmt.Errorf("lab: no lock named %q", name)
	}
	if err != nil {
		return Held{}, fmt.Errorf("lab lock %s on %s: %w", name, key, err)
	}
	if h.Ctx == nil {
		h.Ctx = ctx
	}
	return h, nil
}

func nothing(context.Context) error { return nil }

// notObtained is the error of a lock not had before ctx ended.
func notObtained(ctx context.Context) error {
	return fmt.Errorf("%w: %w", dlock.ErrNotObtained, context.Cause(ctx))
}
