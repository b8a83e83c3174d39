package lab

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"

	"github.com/seckill/seckill/internal/dlock"
)

// dlock is internal/dlock with its watchdog renewing the lease while the holder works. The
// watchdog lock stops there: its holder ignores the lock's fence and its loss, so a holder
// paused past its lease wakes up and writes as if it still held the lock. The fence lock adds
// the fencing token, which the holder's read and write check in PostgreSQL, and nothing else:
// its holder is not told of the loss, so only PostgreSQL can stop its late write. The dlock
// lock has both: the fence, and the watched context, which the lock's loss cancels.
func (l *Locks) dlock(ctx context.Context, key string, lease, wait time.Duration, name string) (Held, error) {
	lk, err := l.dlocks.Obtain(ctx, key, lease, &dlock.Options{Wait: wait, Token: l.token()})
	if err != nil {
		return Held{}, err
	}
	wctx := lk.Watch(context.WithoutCancel(ctx))
	h := Held{Token: lk.Token(), Tried: lk.Acquired(), release: lk.Release}
	switch name {
	case "fence":
		h.Fence = lk.Fence()
	case "dlock":
		h.Ctx, h.Fence = mergeCancel(ctx, wctx), lk.Fence()
	}
	return h, nil
}

// mergeCancel returns ctx, also cancelled (with its cause) when watched is.
func mergeCancel(ctx, watched context.Context) context.Context {
	m, cancel := context.WithCancelCause(ctx)
	context.AfterFunc(watched, func() { cancel(context.Cause(watched)) })
	return m
}

// redsyncLock is go-redsync/redsync v4 as its README shows it: NewMutex with an expiry,
// Lock, and Unlock; its own retries (32 tries, 50 to 250 ms apart) stop when the wait ends.
// Its values carry the lab's owner prefix (WithGenValueFunc) so that the runner can find the
// holder, and its delay between tries is its default (50 to 250 ms at random) but noted
// (WithRetryDelayFunc), to know when the try that got the lock began; nothing else is
// changed.
func (l *Locks) redsyncLock(ctx context.Context, key string, lease time.Duration) (Held, error) {
	tried := time.Now()
	m := l.redsync.NewMutex(key, redsync.WithExpiry(lease),
		redsync.WithGenValueFunc(func() (string, error) { return l.token(), nil }),
		redsync.WithRetryDelayFunc(func(int) time.Duration {
			d := 50*time.Millisecond + rand.N(200*time.Millisecond) // redsync's default
			tried = time.Now().Add(d)                               // the next try begins after it
			return d
		}))
	if err := m.LockContext(ctx); err != nil {
		if ctx.Err() != nil || errors.Is(err, redsync.ErrFailed) {
			return Held{}, errors.Join(notObtained(ctx), err)
		}
		return Held{}, err
	}
	return Held{Token: m.Value(), Tried: tried, release: func(ctx context.Context) error {
		_, err := m.UnlockContext(ctx)
		return err
	}}, nil
}

// redislockLock is bsm/redislock as its README shows it: Obtain with a ttl and a retry
// strategy (linear backoff, 10 ms), Release. Its token carries the lab's owner prefix, and
// its retry strategy is noted (notedRetry), to know when the try that got the lock began.
func (l *Locks) redislockLock(ctx context.Context, key string, lease time.Duration) (Held, error) {
	retry := &notedRetry{RetryStrategy: redislock.LinearBackoff(10 * time.Millisecond), next: time.Now()}
	lk, err := l.redislock.Obtain(ctx, key, lease, &redislock.Options{RetryStrategy: retry, Token: l.token()})
	if errors.Is(err, redislock.ErrNotObtained) || (err != nil && ctx.Err() != nil) {
		return Held{}, errors.Join(notObtained(ctx), err)
	}
	if err != nil {
		return Held{}, err
	}
	return Held{Token: lk.Token(), Tried: retry.next, release: lk.Release}, nil
}

// notedRetry is a redislock retry strategy that notes when the next try begins at the
// earliest: redislock waits each backoff on a ticker started after asking for it.
type notedRetry struct {
	redislock.RetryStrategy
	next time.Time
}

func (r *notedRetry) NextBackoff() time.Duration {
	d := r.RetryStrategy.NextBackoff()
	r.next = time.Now().Add(d)
	return d
}
