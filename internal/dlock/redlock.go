package dlock

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxRedlockNodes is the most nodes a Redlock Client takes (one bit each in
// subscription.sent).
const maxRedlockNodes = 64

var (
	//go:embed scripts/raisefence.lua
	raiseFenceSrc    string
	raiseFenceScript = redis.NewScript(raiseFenceSrc)
)

// NewRedlock returns a Client, with New's API and defaults for a nil opt, that takes every lock
// on a majority of independent Redis masters (docs/dlock.md#redlock-a-majority-of-independent-masters).
// Create the node clients with ContextTimeoutEnabled, MaxRetries -1 and DialerRetries 1; it
// panics without nodes or with more than 64.
func NewRedlock(nodes []redis.UniversalClient, opt *ClientOptions) *Client {
	if len(nodes) == 0 || len(nodes) > maxRedlockNodes {
		panic(fmt.Sprintf("dlock: NewRedlock needs 1 to %d nodes, got %d", maxRedlockNodes, len(nodes)))
	}
	nodes = slices.Clone(nodes)
	rl := &redlock{nodes: nodes, quorum: len(nodes)/2 + 1, every: make([]int, len(nodes))}
	for i := range rl.every {
		rl.every[i] = i
	}
	if opt != nil {
		rl.nodeTimeout = max(opt.NodeTimeout, 0)
	}
	c := &Client{rl: rl, obs: NopObserver{}, notify: newNotifier(nodes...)}
	c.setOptions(opt)
	return c
}

// Ping checks that Redis answers: the single node, or a majority of the
// Redlock nodes. It suits a readiness probe.
func (c *Client) Ping(ctx context.Context) error {
	if c.rl == nil {
		return c.rdb.Ping(ctx).Err()
	}
	q := c.rl
	replies := q.each(ctx, q.slowTimeout(time.Second), nil, q.quorum,
		func(ctx context.Context, rdb redis.UniversalClient) (any, error) { return rdb.Ping(ctx).Result() }, judgeOK)
	var errs []error
	for _, rep := range replies {
		if rep.err != nil {
			errs = append(errs, rep.err)
		}
	}
	if answered := len(q.nodes) - len(errs); answered < q.quorum {
		return q.tooFew(answered, errs)
	}
	return nil
}

// redlock is the node set of a Redlock Client.
type redlock struct {
	nodes       []redis.UniversalClient
	every       []int         // the indexes of all nodes
	quorum      int           // len(nodes)/2 + 1
	nodeTimeout time.Duration // 0: min(50ms, ttl/10)
}

// votes is what the nodes answered to one acquire call.
type votes struct {
	fences  []int64 // by node; 0 where the node did not grant the lock
	busyAt  []bool  // by node: someone else holds the key there
	granted int
	busy    int           // nodes where someone else holds the key
	pttl    time.Duration // the shortest remaining ttl among busy nodes
	errs    []error       // of the nodes that failed to answer
}

// try makes the n-th acquire attempt of r on every node; see NewRedlock.
func (q *redlock) try(ctx context.Context, c *Client, r *request, n int) (*Lock, time.Duration, error) {
	r = r.forTry(n)
	sent := time.Now()
	// Wait for every node (up to the timeout), even once the outcome is known:
	// an acquire still under way could land after the attempt has given its
	// nodes back, and keep a node busy for a whole ttl.
	replies := q.each(ctx, q.acquireTimeout(r.ttl), nil, len(q.nodes), func(ctx context.Context, rdb redis.UniversalClient) (any, error) {
		return r.acquireOn(ctx, rdb)
	}, judgeAnswered)
	v := q.count(replies)
	if v.granted >= q.quorum {
		if fence, ok := q.settle(ctx, r, v, sent); ok {
			return newLock(c, r, fence, sent), 0, nil
		}
	}
	q.releaseFailed(ctx, r, v)
	switch {
	case ctx.Err() != nil:
		return nil, 0, notObtained(ctx)
	case len(v.errs) > len(q.nodes)-q.quorum:
		return nil, 0, fmt.Errorf("dlock: obtain %q: %w", r.key, q.tooFew(v.granted+v.busy, v.errs))
	}
	return nil, v.pttl, nil
}

// forTry returns r for the n-th acquire attempt (from 0) of a Redlock
// Obtain. From the second attempt on the token gets a suffix, so that a late
// acquire or release of an earlier attempt, still on its way to a slow node,
// can never touch this attempt's keys.
func (r *request) forTry(n int) *request {
	if n == 0 {
		return r
	}
	cp := *r
	cp.token = r.token + "." + strconv.Itoa(n)
	return &cp
}

// count sorts the replies to an acquire call.
func (q *redlock) count(replies []reply) votes {
	v := votes{fences: make([]int64, len(replies)), busyAt: make([]bool, len(replies))}
	for i, rep := range replies {
		if rep.err != nil {
			v.errs = append(v.errs, rep.err)
			continue
		}
		fence, pttl, err := parseAcquire(rep.val)
		switch {
		case err != nil:
			v.errs = append(v.errs, err)
		case fence > 0:
			v.fences[i] = fence
			v.granted++
		default:
			if v.busy == 0 || pttl < v.pttl {
				v.pttl = pttl
			}
			v.busy++
			v.busyAt[i] = true
		}
	}
	return v
}

// settle turns a majority of grants into a lock: it takes the largest fence
// and raises the granting nodes below it, until a majority stores it. ok is
// false when that fails, or when the validity ran out meanwhile.
func (q *redlock) settle(ctx context.Context, r *request, v votes, sent time.Time) (fence int64, ok bool) {
	fence, stored := q.raiseTo(ctx, r, v.fences)
	valid := time.Now().Before(sent.Add(r.ttl - r.driftFor(r.ttl)))
	return fence, stored >= q.quorum && valid
}

// releaseFailed deletes the key of a failed attempt on every node that
// granted it or did not answer, and waits for the nodes that granted it, so
// that the key is free for others before this attempt retries; the release
// wakes the other contenders. Nodes that answered busy hold someone else's
// lock and are left alone; the calls to nodes that did not answer go on in
// the background (the next attempt's own token makes a late one harmless).
func (q *redlock) releaseFailed(ctx context.Context, r *request, v votes) {
	var dirty []int
	for i, busy := range v.busyAt {
		if !busy {
			dirty = append(dirty, i)
		}
	}
	if len(dirty) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	q.each(ctx, q.slowTimeout(r.ttl), dirty, v.granted, func(ctx context.Context, rdb redis.UniversalClient) (any, error) {
		n, _, err := r.releaseOn(ctx, rdb)
		return n, err
	}, judgeOK)
}

// errNoMajority marks the error of a Redlock call that fewer than a majority
// of nodes answered.
var errNoMajority = errors.New("no majority of the Redis nodes answered")

// tooFew is the error of a call that fewer than a majority of nodes answered.
func (q *redlock) tooFew(answered int, errs []error) error {
	return fmt.Errorf("%w: %d of %d answered, a majority needs %d: %w",
		errNoMajority, answered, len(q.nodes), q.quorum, errors.Join(errs...))
}
