package dlock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Watch starts the lock's watchdog, which renews it every ttl/3, and returns a context derived
// from ctx that is cancelled, with a cause wrapping ErrLost, when the lock is lost, its safe
// deadline passes unrenewed, or Options.MaxHold is reached. Later calls return the first call's
// context; see docs/dlock.md#the-watchdog.
func (l *Lock) Watch(ctx context.Context) context.Context {
	l.c.turns.keep(l) // keep the turn while watched; the watchdog passes it
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wctx != nil {
		return l.wctx
	}
	wctx, cancel := context.WithCancelCause(ctx)
	l.wctx = wctx
	switch l.state {
	case released:
		cancel(ErrNotHeld)
		return wctx
	case lost:
		cancel(l.cause)
		return wctx
	}
	l.cancel = cancel
	l.done = make(chan struct{})
	l.timer = time.AfterFunc(time.Until(l.deadline), l.onDeadline)
	go l.watchdog(wctx)
	return wctx
}

// onDeadline runs when the safe deadline timer fires. A renewal may have moved
// the deadline on meanwhile (and reset the timer), so it checks again.
func (l *Lock) onDeadline() {
	l.mu.Lock()
	if l.state != held || time.Now().Before(l.deadline) {
		l.mu.Unlock()
		return
	}
	cause := fmt.Errorf("%w: not renewed before its safe deadline", ErrLost)
	if l.capped {
		cause = fmt.Errorf("%w: MaxHold %v reached", ErrLost, l.r.maxHold)
	}
	cancel, ok := l.markLost(cause)
	l.mu.Unlock()
	l.lost(cancel, ok, cause)
}

func (l *Lock) watchdog(ctx context.Context) {
	defer close(l.done)
	defer l.passTurn()
	defer l.stopTimer()
	every := l.r.ttl / 3
	t := time.NewTimer(jitter(every))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ttl, last := l.renewalTTL()
		if ttl <= 0 {
			<-ctx.Done() // MaxHold reached: the deadline timer reports the loss
			return
		}
		err := l.renew(ctx, ttl)
		if errors.Is(err, errReleased) || (ctx.Err() != nil && !errIsLost(err)) {
			return // released, or ctx ended: not a renewal outcome
		}
		l.r.obs.Renewed(l.r.key, err)
		switch {
		case err == nil && last:
			<-ctx.Done()
			return
		case err == nil:
			t.Reset(jitter(every))
		case errIsLost(err):
			return
		default: // Redis unreachable: retry until the deadline timer fires
			t.Reset(jitter(max(every/4, time.Millisecond)))
		}
	}
}

// renew refreshes the lock with a call bounded by the safe deadline: past it
// the lock counts as lost anyway.
func (l *Lock) renew(ctx context.Context, ttl time.Duration) error {
	rctx, cancel := context.WithDeadline(ctx, l.Deadline())
	defer cancel()
	return l.refresh(rctx, ttl)
}

// renewalTTL returns the ttl of the next renewal: the lock's ttl, or less so
// that the key expires at MaxHold, in which case last is true. It returns 0
// when MaxHold leaves no time for another renewal.
func (l *Lock) renewalTTL() (ttl time.Duration, last bool) {
	if l.r.maxHold <= 0 {
		return l.r.ttl, false
	}
	left := time.Until(l.acquired.Add(l.r.maxHold)).Truncate(time.Millisecond)
	if left >= l.r.ttl {
		return l.r.ttl, false
	}
	l.mu.Lock()
	l.capped = true
	l.mu.Unlock()
	if left <= l.r.driftFor(left) {
		return 0, true
	}
	return left, true
}

// stopTimer stops the deadline timer for good: a later Refresh does not
// re-arm it.
func (l *Lock) stopTimer() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.timer.Stop()
	l.timer = nil
}

// jitter returns d less up to a tenth, at random.
func jitter(d time.Duration) time.Duration {
	return d - rand.N(d/10+1)
}
