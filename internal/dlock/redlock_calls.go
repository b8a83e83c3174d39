package dlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// maxNodeTimeout caps the default bound of one acquire call to one node.
const maxNodeTimeout = 50 * time.Millisecond

// errNoReply marks a node whose reply a call did not wait for: the outcome
// was known without it, or (wrapped with the context's error) the timeout
// passed first.
var errNoReply = errors.New("no reply in time")

// reply is one node's answer to a call.
type reply struct {
	val any
	err error
}

// answer is the reply of node i.
type answer struct {
	i int
	reply
}

// acquireTimeout bounds each acquire (and fence raise) call to one node: the
// time it takes comes off the lock's validity.
func (q *redlock) acquireTimeout(ttl time.Duration) time.Duration {
	if q.nodeTimeout > 0 {
		return q.nodeTimeout
	}
	return max(min(maxNodeTimeout, ttl/10), time.Millisecond)
}

// slowTimeout bounds the other calls to one node (release, refresh, TTL):
// they eat no validity, so they may take longer.
func (q *redlock) slowTimeout(ttl time.Duration) time.Duration {
	return 4 * q.acquireTimeout(ttl)
}

// verdict is what one node's reply says about the question of a call.
type verdict int8

const (
	voteFailed verdict = iota // no reply, or an unexpected one
	voteYes
	voteNo
)

// each runs call on the nodes in which (nil: all) at once, each bounded by timeout and ctx,
// and returns the replies by node index as soon as judge's votes decide the call, every node
// answered, or the timeout ran out. A node still under way gets an error wrapping errNoReply;
// its call goes on in the background, so a slow minority never slows a decided call down.
func (q *redlock) each(ctx context.Context, timeout time.Duration, which []int, need int,
	call func(ctx context.Context, rdb redis.UniversalClient) (any, error), judge func(reply) verdict,
) []reply {
	if which == nil {
		which = q.every
	}
	ctx, ended := callContext(ctx, timeout, len(which))
	answers := make(chan answer, len(which)) // buffered: late calls never block
	for _, i := range which {
		go func() {
			defer ended()
			v, err := call(ctx, q.nodes[i])
			answers <- answer{i, reply{v, err}}
		}()
	}
	replies := make([]reply, len(q.nodes))
	for _, i := range which {
		replies[i].err = errNoReply
	}
	var ayes, nays int
	for n := 0; n < len(which) && ayes < need && nays <= len(which)-need; n++ {
		var a answer
		select {
		case a = <-answers:
		case <-ctx.Done(): // the timeout, or every call has ended and sent its answer
			return drain(replies, answers, ctx.Err())
		}
		replies[a.i] = a.reply
		if judge(a.reply) == voteYes {
			ayes++
		} else {
			nays++
		}
	}
	return replies
}

// callContext returns ctx bounded by timeout for calls calls, and the
// function each call runs when it ends: the last one releases the context.
func callContext(ctx context.Context, timeout time.Duration, calls int) (context.Context, func()) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	var running atomic.Int32
	running.Store(int32(calls))
	return ctx, func() {
		if running.Add(-1) == 0 {
			cancel()
		}
	}
}

// drain takes the answers already sent, then marks the replies still
// missing with errNoReply and the context's error.
func drain(replies []reply, answers <-chan answer, cause error) []reply {
	for len(answers) > 0 {
		a := <-answers // only the collector receives: this never blocks
		replies[a.i] = a.reply
	}
	for i := range replies {
		if replies[i].err == errNoReply {
			replies[i].err = fmt.Errorf("%w: %w", errNoReply, cause)
		}
	}
	return replies
}

// judgeInt judges the reply of a script that answers 1 for yes.
func judgeInt(r reply) verdict {
	switch n, ok := r.val.(int64); {
	case r.err != nil || !ok:
		return voteFailed
	case n == 1:
		return voteYes
	}
	return voteNo
}

// judgeAnswered counts every reply as yes, so that each waits for every node.
func judgeAnswered(reply) verdict { return voteYes }

// judgeOK judges a reply that only has to arrive.
func judgeOK(r reply) verdict {
	if r.err != nil {
		return voteFailed
	}
	return voteYes
}

// decide turns the replies of a Lock's call into its answer: 1 when a
// majority said yes; 0 when so many said no that a majority cannot say yes;
// otherwise (too many nodes failed to answer) an error.
func (q *redlock) decide(replies []reply, judge func(reply) verdict) (int64, error) {
	var ayes, nays int
	var errs []error
	for _, rep := range replies {
		switch judge(rep) {
		case voteYes:
			ayes++
		case voteNo:
			nays++
		default:
			errs = append(errs, replyErr(rep))
		}
	}
	switch {
	case ayes >= q.quorum:
		return 1, nil
	case len(q.nodes)-nays < q.quorum:
		return 0, nil
	}
	return 0, q.tooFew(ayes+nays, errs)
}

// replyErr is the error of a failed reply.
func replyErr(r reply) error {
	if r.err != nil {
		return r.err
	}
	return fmt.Errorf("unexpected reply %v", r.val)
}

// refresh runs refresh.lua on every node; see Client.refreshCall.
func (q *redlock) refresh(ctx context.Context, r *request, ttl time.Duration) (int64, error) {
	replies := q.each(ctx, q.slowTimeout(r.ttl), nil, q.quorum, func(ctx context.Context, rdb redis.UniversalClient) (any, error) {
		return refreshScript.Run(ctx, rdb, []string{r.key}, r.token, ttl.Milliseconds()).Int64()
	}, judgeInt)
	return q.decide(replies, judgeInt)
}

// release runs release.lua on every node; see Client.releaseCall.
func (q *redlock) release(ctx context.Context, l *Lock) (int64, error) {
	r := l.r
	replies := q.each(ctx, q.slowTimeout(r.ttl), nil, q.quorum, func(ctx context.Context, rdb redis.UniversalClient) (any, error) {
		return l.resentInTime(r.releaseOn(ctx, rdb))
	}, judgeInt)
	return q.decide(replies, judgeInt)
}

// pttl runs pttl.lua on every node; see Client.pttlCall. The lock lives as
// long as a majority holds it: until the quorum-th longest remaining ttl of
// the nodes that answered.
func (q *redlock) pttl(ctx context.Context, r *request) (int64, error) {
	replies := q.each(ctx, q.slowTimeout(r.ttl), nil, q.quorum, func(ctx context.Context, rdb redis.UniversalClient) (any, error) {
		return pttlScript.Run(ctx, rdb, []string{r.key}, r.token).Int64()
	}, judgePTTL)
	held, err := q.decide(replies, judgePTTL)
	if err != nil || held == 0 {
		return notHeldPTTL, err
	}
	var ms []int64
	for _, rep := range replies {
		if judgePTTL(rep) == voteYes {
			ms = append(ms, rep.val.(int64))
		}
	}
	slices.Sort(ms)
	return ms[len(ms)-q.quorum], nil
}

// judgePTTL judges a reply of pttl.lua: a ttl, or notHeldPTTL.
func judgePTTL(r reply) verdict {
	switch n, ok := r.val.(int64); {
	case r.err != nil || !ok:
		return voteFailed
	case n >= 0:
		return voteYes
	}
	return voteNo
}
