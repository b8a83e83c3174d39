package lab

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/seckill/seckill/internal/etcdlock"
)

// ErrNoEtcd is the etcd lock's error in a process that has no etcd: the API was started
// without ETCD_ENDPOINTS. It wraps etcdlock.ErrUnavailable, so the API answers 503
// unavailable, and its text, in the API's log, says what is missing.
var ErrNoEtcd = fmt.Errorf("%w: lab: this process has no etcd; the etcd lock needs ETCD_ENDPOINTS", etcdlock.ErrUnavailable)

// tagTTL bounds how long the etcd lock's name tag (see etcdLock) outlives a holder that was
// killed before it could delete it; the next holder overwrites it anyway.
const tagTTL = time.Minute

// etcdLock is internal/etcdlock, etcd's lock: a key under the lock's name written with the
// process's session lease, the oldest key holds, etcd's keep-alive renews the lease while
// the holder works. The holder works on the lock's watched
// context (the lease's end cancels it) and gets the fencing token, its key's create revision,
// which its read and write check exactly as the dlock lock's.
//
// The key in etcd names no process (its value is empty, as in etcd's concurrency package), so once
// it holds, the lock also writes a name tag to Redis, at key: "<pid>:<fence>", which it
// deletes (only if still its own) before it releases. It excludes nobody and nothing reads
// it to decide anything: it lets the lab's runner find the holder's process as it finds the
// other locks' holders. A tag that cannot be written or deleted is left at that.
func (l *Locks) etcdLock(ctx context.Context, key string, lease, wait time.Duration) (Held, error) {
	if l.etcd == nil {
		return Held{}, ErrNoEtcd
	}
	lk, err := l.etcd.Obtain(ctx, key, lease, wait)
	if err != nil {
		return Held{}, err
	}
	tag := l.owner + strconv.FormatInt(lk.Fence(), 10)
	_ = l.rdb.Set(command(ctx), key, tag, tagTTL).Err()
	return Held{Ctx: lk.Watch(ctx), Fence: lk.Fence(), Token: tag, Tried: lk.Acquired(), release: func(ctx context.Context) error {
		_ = compareAndDelete.Run(ctx, l.rdb, []string{key}, tag).Err()
		return lk.Release(ctx)
	}}, nil
}
