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

// etcdLock is internal/etcdlock's lock: the holder works on the lock's watched context and checks
// its fence, the key's create revision, as the dlock lock's holder does. Once it holds, it also
// writes a name tag "<pid>:<fence>" to Redis at key, deleted before it releases, so that the lab's
// runner finds the holder's process (docs/lab.md); the tag excludes nobody, and one that cannot be
// written is left at that.
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
