package lab

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/seckill/seckill/internal/zklock"
)

// ErrNoZooKeeper is the zookeeper locks' error in a process that has no ZooKeeper: the API
// was started without ZOOKEEPER_SERVERS. It wraps zklock.ErrUnavailable, so the API answers
// 503 unavailable, and its text, in the API's log, says what is missing.
var ErrNoZooKeeper = fmt.Errorf("%w: lab: this process has no ZooKeeper; the zookeeper locks need ZOOKEEPER_SERVERS", zklock.ErrUnavailable)

// zookeeperLock is internal/zklock, the recipe of ZooKeeper's documentation: an ephemeral
// sequential node per claim, in a session whose timeout is the product's lease (as the
// ensemble bounds it), the oldest node holds. A process's buyers of one product queue in the
// process first, as internal/etcdlock's do, so that each process has one claim at a time.
// The zookeeper lock hands the holder its node's creation zxid as its fence; zookeeper-nofence
// does not. Neither watches the session (docs/lab.md, "The ZooKeeper locks"). It writes a
// name tag to Redis at key, "<pid>:<fence>", as the etcd lock does.
func (l *Locks) zookeeperLock(ctx context.Context, key string, lease, wait time.Duration, fenced bool) (Held, error) {
	if l.zk == nil {
		return Held{}, ErrNoZooKeeper
	}
	v, _ := l.zkQueues.LoadOrStore(key, make(chan struct{}, 1))
	queue := v.(chan struct{})
	deadline := time.Now().Add(wait)
	wctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	select {
	case queue <- struct{}{}:
	case <-wctx.Done():
		return Held{}, fmt.Errorf("%w: %w", zklock.ErrNotObtained, context.Cause(wctx))
	}
	lk, err := l.zk.Obtain(ctx, key, lease, time.Until(deadline))
	if err != nil {
		<-queue
		return Held{}, err
	}
	tag := l.owner + strconv.FormatInt(lk.Fence(), 10)
	_ = l.rdb.Set(command(ctx), key, tag, tagTTL).Err()
	h := Held{Token: tag, Tried: lk.Acquired(), release: func(ctx context.Context) error {
		defer func() { <-queue }()
		_ = compareAndDelete.Run(ctx, l.rdb, []string{key}, tag).Err()
		return lk.Release(ctx)
	}}
	if fenced {
		h.Fence = lk.Fence()
	}
	return h, nil
}
