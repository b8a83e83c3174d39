package dlock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Suffixes of a fair key's queue (a list of waiting tokens, oldest first) and of its
// timeouts (a sorted set: token -> when a waiter that stopped asking is dropped).
const (
	queueSuffix    = ":queue"
	timeoutsSuffix = ":timeouts"
	arrivalsSuffix = ":arrivals" // hash: token -> when it started waiting
)

// minQueueTimeout is the least time a fair waiter keeps its place in the queue (or a waiting
// writer its claim) between two of its calls; see placeTimeout.
const minQueueTimeout = time.Second

// placeTimeout is how long r keeps its place between two calls: at least minQueueTimeout,
// and 8 × MaxBackoff, so that a live waiter, which calls at least every MaxBackoff, never
// loses it.
func (r *request) placeTimeout() time.Duration { return max(minQueueTimeout, 8*r.maxBackoff) }

// ErrFairRedlock is returned by ObtainFair on a Redlock Client: a queue kept on independent
// masters has no single order, so a fair lock needs one Redis (or one Redis Cluster).
var ErrFairRedlock = errors.New("dlock: fair locks need a single Redis or Redis Cluster, not Redlock")

// ObtainFair is Obtain for a fair lock: the waiters of key, in every Client, are granted it in
// the order they first asked. A fair key must only be obtained with ObtainFair; on a Redlock
// Client it returns ErrFairRedlock. See docs/dlock.md#the-fair-lock.
func (c *Client) ObtainFair(ctx context.Context, key string, ttl time.Duration, opt *Options) (*Lock, error) {
	if c.rl != nil {
		return nil, ErrFairRedlock
	}
	return c.obtainWith(ctx, key, ttl, opt, func(r *request) {
		r.fair = true
		r.queueKey, r.timeoutsKey = derive(key, queueSuffix), derive(key, timeoutsSuffix)
		r.arrivalsKey = derive(key, arrivalsSuffix)
		r.queueTimeout = r.placeTimeout()
	}, c.obtainDirect)
}

// obtainDirect attempts, without the Client's local queue, until the lock is taken, Wait runs
// out, ctx ends or Redis fails; a fair or read-write request that gave up leaves its place.
func (c *Client) obtainDirect(ctx context.Context, r *request) (*Lock, error) {
	if ctx.Err() != nil {
		return nil, notObtained(ctx)
	}
	w := r.waitClock()
	defer w.stop()
	l, err := c.attempt(ctx, r, &w)
	switch {
	case err == nil:
	case r.fair:
		c.goBackground(func() { c.leaveQueue(r) })
	case r.rw == rwWrite:
		c.goBackground(func() { c.leaveRW(r) })
	}
	return l, err
}

// tryFair is try for a fair lock.
func (c *Client) tryFair(ctx context.Context, r *request) (any, error) {
	keys := []string{r.key, r.fenceKey(), r.queueKey, r.timeoutsKey, r.arrivalsKey}
	return fairAcquireScript.Run(ctx, c.rdb, keys, r.token, r.ttl.Milliseconds(),
		fenceKeyTTL.Milliseconds(), r.queueTimeout.Milliseconds()).Result()
}

// fairAnswer reads fairacquire.lua's answer res to a try sent at sent: the lock, or the
// holder's remaining ttl (zero when unknown, or when another waiter is ahead).
func (c *Client) fairAnswer(r *request, res any, sent time.Time) (*Lock, time.Duration, error) {
	switch v := res.(type) {
	case string:
		fence, next, err := parseFairGrant(v, sent, time.Now())
		if err != nil {
			c.goBackground(func() { c.cleanup(r) })
			return nil, 0, fmt.Errorf("dlock: obtain %q: bad answer %q: %w", r.key, v, err)
		}
		l := newLock(c, r, fence, sent)
		l.nextWaiter = next
		return l, 0, nil
	case int64:
		return nil, time.Duration(max(v, 0)) * time.Millisecond, nil
	}
	return nil, 0, fmt.Errorf("dlock: obtain %q: unexpected reply %T", r.key, res)
}

// leaveQueue takes r's token out of its key's queue.
func (c *Client) leaveQueue(r *request) {
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	_ = fairLeaveScript.Run(ctx, c.rdb, []string{r.queueKey, r.timeoutsKey, r.arrivalsKey}, r.token).Err()
}

// parseFairGrant reads fairacquire.lua's answer to a call sent at sent and answered at
// recv: the fence and, if another waiter is queued, when it started waiting, in this
// process's clock (the server's clock is mapped to it at the call's midpoint).
func parseFairGrant(v string, sent, recv time.Time) (fence int64, next time.Time, err error) {
	parts := strings.Split(v, "|")
	if fence, err = strconv.ParseInt(parts[0], 10, 64); err != nil || len(parts) != 3 || parts[2] == "" {
		return fence, time.Time{}, err // a retried call answers the fence alone
	}
	now, err1 := strconv.ParseInt(parts[1], 10, 64)
	since, err2 := strconv.ParseInt(parts[2], 10, 64)
	if err1 != nil || err2 != nil {
		return fence, time.Time{}, nil
	}
	mid := sent.Add(recv.Sub(sent) / 2)
	return fence, mid.Add(time.Duration(since-now) * time.Millisecond), nil
}

// NextWaiterSince reports when a fair lock's next waiter began to wait, by this process's
// clock, if there is one.
func (l *Lock) NextWaiterSince() (time.Time, bool) { return l.nextWaiter, !l.nextWaiter.IsZero() }
