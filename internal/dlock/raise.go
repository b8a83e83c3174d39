package dlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// ErrFloorNotAhead is RaiseFence's error when the floor is not ahead of Redis's clock: a fence
// minted after this lock's, or one the clock has caught up with (the next Obtain passes it).
var ErrFloorNotAhead = errors.New("dlock: fence floor not ahead of the Redis clock")

// errReadFence is RaiseFence's error for a read lock, whose fence guards no write.
var errReadFence = errors.New("dlock: a read lock's fence cannot be raised")

// RaiseFence mints a new fence for the held lock, above floor and every fence of its key, and
// Fence returns it from then on: call it when the store refused the lock's fence for floor
// (docs/dlock.md#if-redis-loses-its-data). It returns ErrNotHeld when the key no longer holds this
// lock, ErrFloorNotAhead when the Redis clock is past floor, and Redis failures wrapped.
func (l *Lock) RaiseFence(ctx context.Context, floor int64) (int64, error) {
	if err := l.heldErr(); err != nil {
		return 0, err
	}
	if l.r.rw == rwRead {
		return 0, errReadFence
	}
	var fence int64
	var err error
	if l.c.rl != nil {
		fence, err = l.c.rl.refence(ctx, l.r, floor)
	} else {
		fence, err = refenceOn(ctx, l.c.rdb, l.r, floor)
	}
	if err != nil {
		return 0, fmt.Errorf("dlock: raise the fence of %q: %w", l.r.key, err)
	}
	if fence < 0 {
		return 0, ErrFloorNotAhead
	}
	if fence == 0 {
		if err := l.heldErr(); err != nil {
			return 0, err // released meanwhile: no loss
		}
		l.lose(fmt.Errorf("%w: the key no longer holds its token", ErrLost))
		return 0, ErrNotHeld
	}
	for { // never lower it: another RaiseFence may have run meanwhile
		cur := l.fence.Load()
		if fence <= cur {
			return cur, nil
		}
		if l.fence.CompareAndSwap(cur, fence) {
			return fence, nil
		}
	}
}

// refenceOn runs refence.lua for r on rdb: the new fence, 0 when the key does not hold r's
// token, -1 when floor is not ahead of the clock.
func refenceOn(ctx context.Context, rdb redis.UniversalClient, r *request, floor int64) (int64, error) {
	keys := []string{r.key, r.fenceKey()}
	return refenceScript.Run(ctx, rdb, keys, r.token, strconv.FormatInt(floor, 10), fenceKeyTTLArg).Int64()
}

// refence runs refence.lua on every node: where a majority minted a new fence, the fence is
// the largest, raised on the others until a majority stores it (as an acquisition's is, see
// settle). It answers 0 when a majority does not hold the lock, -1 when it does but too few
// nodes found floor ahead of their clocks.
func (q *redlock) refence(ctx context.Context, r *request, floor int64) (int64, error) {
	replies := q.each(ctx, q.slowTimeout(r.ttl), nil, len(q.nodes), func(ctx context.Context, rdb redis.UniversalClient) (any, error) {
		return refenceOn(ctx, rdb, r, floor)
	}, judgeAnswered)
	fences := make([]int64, len(replies))
	var minted, behind, none int
	var errs []error
	for i, rep := range replies {
		f, ok := rep.val.(int64)
		switch {
		case rep.err != nil || !ok:
			errs = append(errs, replyErr(rep))
		case f > 0:
			fences[i], minted = f, minted+1
		case f < 0:
			behind++
		default:
			none++
		}
	}
	switch {
	case len(q.nodes)-none < q.quorum:
		return 0, nil
	case minted < q.quorum && minted+behind >= q.quorum:
		return -1, nil
	case minted < q.quorum:
		return 0, q.tooFew(minted+behind+none, errs)
	}
	fence, stored := q.raiseTo(ctx, r, fences)
	if stored < q.quorum {
		return 0, fmt.Errorf("fence %d stored on %d nodes, a majority needs %d", fence, stored, q.quorum)
	}
	return fence, nil
}

// raiseTo raises the fence keys of the nodes that minted a fence (fences, by node; 0 where
// none was minted) below the largest to it, until a majority stores it, and returns that
// fence and how many nodes store it.
func (q *redlock) raiseTo(ctx context.Context, r *request, fences []int64) (fence int64, stored int) {
	fence = slices.Max(fences)
	var low []int
	for i, f := range fences {
		switch {
		case f == fence:
			stored++
		case f > 0:
			low = append(low, i)
		}
	}
	if stored >= q.quorum {
		return fence, stored
	}
	arg := strconv.FormatInt(fence, 10)
	replies := q.each(ctx, q.acquireTimeout(r.ttl), low, q.quorum-stored, func(ctx context.Context, rdb redis.UniversalClient) (any, error) {
		return raiseFenceScript.Run(ctx, rdb, []string{r.fenceKey()}, arg, fenceKeyTTL.Milliseconds()).Result()
	}, judgeOK)
	for _, i := range low {
		if replies[i].err == nil {
			stored++
		}
	}
	return fence, stored
}
