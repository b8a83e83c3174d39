package labapi

import (
	"context"
	"crypto/rand"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/order"
)

// lockHistory records this process's product lock operations in Options.LockHistory, for a
// linearizability checker (internal/history): each grant, each write under it, the loss its
// holder is told of, and its release, with the time each was invoked (for a grant, when the
// attempt that took the lock began) and the time it completed. Only the locks that exclude
// across processes are recorded: the dlock strategy's (the service's product locks, through
// recordedLocker) and the lab's; the redis strategy's writer slots are not a lock of that
// kind. A nil *lockHistory records nothing.
type lockHistory struct {
	rec history.Recorder
	// prefix and grants make the ids of this process's grants whose lock has no token of its
	// own unique among processes.
	prefix string
	grants atomic.Int64
}

func newLockHistory(rec history.Recorder) *lockHistory {
	if rec == nil {
		return nil
	}
	return &lockHistory{rec: rec, prefix: rand.Text()[:10] + "#"}
}

// grant is one grant of a product lock in the history; a nil *grant records nothing.
type grant struct {
	h     *lockHistory
	key   string
	token string
	fence atomic.Int64 // the lock's, raised by RaiseFence
}

// granted records that the lock on key was granted: taken after tried (when the attempt that
// took it began, or else when it was asked for), held now, with token (its value in the lock's
// store; empty: the lock has none unique to the grant, and an id is made) and fence (0: none).
func (h *lockHistory) granted(key, token string, fence int64, tried time.Time) *grant {
	if h == nil {
		return nil
	}
	if token == "" {
		token = h.prefix + strconv.FormatInt(h.grants.Add(1), 10)
	}
	g := &grant{h: h, key: key, token: token}
	g.fence.Store(fence)
	g.record(history.Grant, tried, history.OK)
	return g
}

func (g *grant) record(kind string, invoke time.Time, outcome string) {
	g.recordOp(history.LockOp{Kind: kind, Invoke: invoke, Outcome: outcome})
}

// recordOp records op as the grant's, completed now.
func (g *grant) recordOp(op history.LockOp) {
	op.Key, op.Token, op.Fence, op.Complete = g.key, g.token, g.fence.Load(), time.Now()
	g.h.rec.Record(op)
}

// watchLoss records a loss of the lock when ctx, the holder's watched context, ends with one
// (dlock.ErrLost, order.ErrLockLost): when the holder is told. stop ends the watch, once a
// loss being recorded is, so that it comes before the release.
func (g *grant) watchLoss(ctx context.Context) (stop func()) {
	if g == nil {
		return func() {}
	}
	recorded := make(chan struct{})
	stopFunc := context.AfterFunc(ctx, func() {
		defer close(recorded)
		if lost(context.Cause(ctx)) {
			g.record(history.Loss, time.Now(), history.OK)
		}
	})
	return func() {
		if !stopFunc() {
			<-recorded
		}
	}
}

// noWrite is writing's end when nothing is recorded.
func noWrite(error) {}

// writing is called just before a write under the lock (the guarded, fenced UPDATE); the
// func it returns is called with the write's error once it is over, COMMIT included: nil is
// ok (committed), one matching order.ErrOutcomeUnknown unknown (COMMIT got no answer, and PostgreSQL
// could not tell), any other fail (nothing written: refused by the fence, rolled back).
func (g *grant) writing() (written func(err error)) {
	if g == nil {
		return noWrite
	}
	invoke := time.Now()
	return func(err error) {
		g.recordOp(history.LockOp{Kind: history.Write, Invoke: invoke, Outcome: writeOutcome(err), Reason: reasonOf(context.Background(), err)})
	}
}

func writeOutcome(err error) string {
	switch {
	case err == nil:
		return history.OK
	case errors.Is(err, order.ErrOutcomeUnknown):
		return history.Unknown
	}
	return history.Fail
}

// released records the lock's release, asked for at asked: ok when released, unknown
// when releaseErr is not nil (the lock was no longer held, or its store did not answer).
func (g *grant) released(asked time.Time, releaseErr error) {
	if g == nil {
		return
	}
	op := history.LockOp{Kind: history.Release, Invoke: asked, Outcome: history.OK}
	if releaseErr != nil {
		op.Outcome, op.Reason = history.Unknown, releaseErr.Error()
	}
	g.recordOp(op)
}

// recordedLocker is the service's product locks (order.Deps.ProductLocks) with their
// operations recorded in the lock history. Its held locks carry their grant, so that the write
// under them is recorded too (they are order.WriteWatchers).
type recordedLocker struct {
	order.Locker
	h *lockHistory
}

// Do is the Locker's Do, recorded: the grant, from the attempt that took the lock (or Do's
// call, if the lock does not tell: see acquiredOf) to fn's start; a loss the holder
// is told of while fn runs; and the release, from fn's return to Do's, unknown if the lock was
// lost (Do's error then says so; a release that fails otherwise is not reported by Do, and
// the lease ends that lock).
func (r recordedLocker) Do(ctx context.Context, key string, ttl, wait time.Duration, fair bool,
	fn func(ctx context.Context, l order.HeldLock) error,
) error {
	asked := time.Now()
	var (
		g    *grant
		done time.Time
	)
	err := r.Locker.Do(ctx, key, ttl, wait, fair, func(lctx context.Context, l order.HeldLock) error {
		g = r.h.granted(key, tokenOf(l), l.Fence(), later(asked, acquiredOf(l)))
		defer g.watchLoss(lctx)()
		defer func() { done = time.Now() }()
		return fn(lctx, recordedHeld{HeldLock: l, g: g})
	})
	if g != nil {
		g.released(done, lostErr(err))
	}
	return err
}

// DoMulti is the Locker's DoMulti, recorded for each key: the grant, fn as one write under
// every key's lock (a bundle's fn is one transaction over all of them), and the release. A
// loss is not recorded: the watched context does not say which key was lost.
func (r recordedLocker) DoMulti(ctx context.Context, keys []string, ttl, wait time.Duration,
	fn func(ctx context.Context, locks map[string]order.HeldLock) error,
) error {
	asked := time.Now()
	var (
		grants []*grant
		done   time.Time
	)
	err := r.Locker.DoMulti(ctx, keys, ttl, wait, func(lctx context.Context, locks map[string]order.HeldLock) error {
		held := make(map[string]order.HeldLock, len(locks))
		for _, k := range keys {
			g := r.h.granted(k, "", locks[k].Fence(), asked)
			grants = append(grants, g)
			held[k] = recordedHeld{HeldLock: locks[k], g: g}
		}
		written := make([]func(error), len(grants))
		for i, g := range grants {
			written[i] = g.writing()
		}
		err := fn(lctx, held)
		for _, w := range written {
			w(err)
		}
		done = time.Now()
		return err
	})
	for _, g := range grants {
		g.released(done, lostErr(err))
	}
	return err
}

// lostErr is err if it says a lock was lost, else nil.
func lostErr(err error) error {
	if lost(err) {
		return err
	}
	return nil
}

// tokenOf is the held lock's own token, if it has one (a Redis lock's value).
func tokenOf(l order.HeldLock) string {
	if t, ok := l.(interface{ Token() string }); ok {
		return t.Token()
	}
	return ""
}

// acquiredOf is when the call that took the held lock was sent, if the lock tells (a Redis
// lock's Acquired): its grant took effect after it. Before it, the holder only waited, and a
// grant's interval that includes the wait lets the checker place it anywhere in the wait,
// which makes its search exponential in the waiters.
func acquiredOf(l order.HeldLock) time.Time {
	if a, ok := l.(interface{ Acquired() time.Time }); ok {
		return a.Acquired()
	}
	return time.Time{}
}

// later is the later of asked and tried (zero: unknown): the grant's invoke.
func later(asked, tried time.Time) time.Time {
	if tried.After(asked) {
		return tried
	}
	return asked
}

// recordedHeld is a lock held through recordedLocker: it carries its grant.
type recordedHeld struct {
	order.HeldLock
	g *grant
}

// RaiseFence is the lock's RaiseFence; the grant's later operations carry the new fence.
func (r recordedHeld) RaiseFence(ctx context.Context, floor int64) (int64, error) {
	f, err := r.HeldLock.RaiseFence(ctx, floor)
	if err == nil && r.g != nil {
		r.g.fence.Store(f)
	}
	return f, err
}

// Writing records a write under the held lock (order.WriteWatcher): see grant.writing.
func (r recordedHeld) Writing() (written func(err error)) { return r.g.writing() }

// lost reports whether err says a product lock was lost while held.
func lost(err error) bool { return errors.Is(err, dlock.ErrLost) || errors.Is(err, order.ErrLockLost) }
