package dlock_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/faultproxy"
)

// A release or a handoff whose script ran but whose reply was lost: the proxy cuts the
// connection as Redis answers, and go-redis sends the call again on a new connection. The
// retried call must answer as the first would have.

// lostReplyRedis returns a proxy to the suite's Redis and a client through it that retries a
// failed call once, after backoff.
func lostReplyRedis(t *testing.T, backoff time.Duration) (*faultproxy.Proxy, *redis.Client) {
	t.Helper()
	p := faultproxy.New(t, "", redisAddr(t))
	return p, newRedisAt(t, p.Addr(), func(o *redis.Options) {
		o.MaxRetries, o.MinRetryBackoff, o.MaxRetryBackoff = 1, backoff, backoff
	})
}

// carries matches a chunk that carries token: a script call of the lock that holds it.
func carries(token string) func([]byte) bool {
	return func(chunk []byte) bool { return bytes.Contains(chunk, []byte(token)) }
}

// TestHandoffRetriedAfterLostReply: the handoff ran, its reply was lost, and go-redis
// retried it. The key holds the waiter's token by then: the retry must return the waiter's
// fence, so the waiter gets the lock at once and the holder's Release reports no loss.
func TestHandoffRetriedAfterLostReply(t *testing.T) {
	skipRedlockSuite(t) // a Redlock Client never hands over
	t.Parallel()
	p, rdb := lostReplyRedis(t, 10*time.Millisecond)
	key := testKey(t, rdb, "lost-handoff")
	c := newClient(t, rdb, &dlock.ClientOptions{Cohort: 4})

	// Once through, so that Redis has the scripts: the call that is cut must be the one
	// that runs the script, not an EVALSHA answered NOSCRIPT.
	warm := mustObtain(t, c, key, 5*time.Second, nil)
	waiter := queuedWaiter(t, c, key, "")
	mustRelease(t, warm)
	holder := <-waiter
	if holder == nil {
		t.FailNow()
	}

	waiter = queuedWaiter(t, c, key, "")
	cut := p.CutReply(carries(holder.Token()))
	start := time.Now()
	if err := holder.Release(context.Background()); err != nil {
		t.Errorf("holder's Release after the handoff's reply was lost = %v, want nil", err)
	}
	cut.Await(t, time.Second)
	var next *dlock.Lock
	select {
	case next = <-waiter:
	case <-time.After(2 * time.Second): // the lock's ttl is 5 s: an orphaned key would take that long
		t.Cleanup(func() { // the waiter gets the lock after all, or fails
			if l := <-waiter; l != nil {
				_ = l.Release(context.Background())
			}
		})
		t.Fatalf("the waiter did not get the lock within 2 s of the handoff (%v)", time.Since(start))
	}
	if next == nil {
		t.FailNow()
	}
	if got := rdb.Get(context.Background(), key).Val(); got != next.Token() {
		t.Errorf("key holds %q, the waiter's token is %q", got, next.Token())
	}
	if next.Fence() <= holder.Fence() {
		t.Errorf("waiter's fence %d, not above the holder's %d", next.Fence(), holder.Fence())
	}
	mustRelease(t, next)
}

// TestReleaseRetriedAfterLostReply: the release deleted the key, its reply was lost, and
// go-redis retried it: the retry must report the release, not a loss, whether it finds the
// key gone or taken by the next holder meanwhile.
func TestReleaseRetriedAfterLostReply(t *testing.T) {
	for _, taken := range []bool{false, true} {
		name := map[bool]string{false: "gone", true: "taken"}[taken]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// A retry late enough for another Client to take the key first.
			p, rdb := lostReplyRedis(t, 200*time.Millisecond)
			key := testKey(t, rdb, "lost-release")
			c := newClient(t, rdb, nil)
			warm := mustObtain(t, c, key, 5*time.Second, nil)
			mustRelease(t, warm)

			holder := mustObtain(t, c, key, 5*time.Second, nil)
			next := make(chan *dlock.Lock, 1)
			if taken { // waits for the key, directly
				other := newClient(t, newRedis(t), nil)
				go func() {
					l, err := other.Obtain(context.Background(), key, 5*time.Second, &dlock.Options{Wait: 10 * time.Second})
					if err != nil {
						t.Errorf("other Obtain: %v", err)
					}
					next <- l
				}()
				testenv.Eventually(t, 5*time.Second, "the other Client to wait", func() bool {
					return rdb.Exists(context.Background(), dlock.ReleaseChannel(key)).Val() == 1
				})
			}
			cut := p.CutReply(carries(holder.Token()))
			if err := holder.Release(context.Background()); err != nil {
				t.Fatalf("Release retried after its reply was lost = %v, want nil", err)
			}
			cut.Await(t, time.Second)
			if taken {
				l := <-next
				if l == nil {
					t.FailNow()
				}
				if l.Fence() <= holder.Fence() {
					t.Fatalf("next holder's fence %d, not above %d", l.Fence(), holder.Fence())
				}
				mustRelease(t, l)
			}
		})
	}
}

// TestReleaseRetriedSecondsLater: a release sent again 6 s after its first run deleted the key
// still reports the release. Until 2026-12-02 the first run left a marker for 5 s, and a call
// sent again later reported a loss; now the call sent again counts as the first run's doing
// when that was sent before the lock's safe deadline.
func TestReleaseRetriedSecondsLater(t *testing.T) {
	skipRedlockSuite(t) // a Redlock release waits for a node at most four node timeouts
	t.Parallel()
	p, rdb := lostReplyRedis(t, 6*time.Second)
	key := testKey(t, rdb, "late-release")
	c := newClient(t, rdb, nil)
	mustRelease(t, mustObtain(t, c, key, 30*time.Second, nil)) // Redis has the script
	holder := mustObtain(t, c, key, 30*time.Second, nil)
	cut := p.CutReply(carries(holder.Token()))
	if err := holder.Release(context.Background()); err != nil {
		t.Fatalf("Release sent again 6 s after its reply was lost = %v, want nil", err)
	}
	cut.Await(t, time.Second)
}

// TestReleaseRetriedPastDeadlineIsNotHeld: the control of the rule above. A release sent
// after the lock's safe deadline, to a key that expired, whose reply is lost and which
// go-redis sends again, reports the loss: the key's absence may be its expiry.
func TestReleaseRetriedPastDeadlineIsNotHeld(t *testing.T) {
	t.Parallel()
	p, rdb := lostReplyRedis(t, 10*time.Millisecond)
	key := testKey(t, rdb, "late-expired-release")
	c := newClient(t, rdb, nil)
	mustRelease(t, mustObtain(t, c, key, time.Second, nil)) // Redis has the script
	holder := mustObtain(t, c, key, 200*time.Millisecond, nil)
	testenv.Eventually(t, 5*time.Second, "the key to expire", func() bool {
		return rdb.Exists(context.Background(), key).Val() == 0
	})
	cut := p.CutReply(carries(holder.Token()))
	if err := holder.Release(context.Background()); !errors.Is(err, dlock.ErrNotHeld) {
		t.Fatalf("Release of an expired lock, sent again after its reply was lost = %v, want ErrNotHeld", err)
	}
	cut.Await(t, time.Second)
}

// TestReleaseOfExpiredLockIsNotHeld: the marker is the release's own; a lock that expired
// before its release is still reported not held.
func TestReleaseOfExpiredLockIsNotHeld(t *testing.T) {
	rdb, key, c := oneKey(t, "expired-release")
	l := mustObtain(t, c, key, time.Minute, nil)
	if err := rdb.Del(context.Background(), key).Err(); err != nil { // as its expiry would
		t.Fatal(err)
	}
	if err := l.Release(context.Background()); err == nil {
		t.Fatal("Release of a lock whose key was gone = nil, want ErrNotHeld")
	}
}

// TestFairAndReaderReleaseRetriedAfterLostReply: TestReleaseRetriedAfterLostReply for a fair
// lock's release and a reader's (RWMutex.RLock): each leaves its marker too, so a retry after
// a lost reply reports the release, not a loss.
func TestFairAndReaderReleaseRetriedAfterLostReply(t *testing.T) {
	skipRedlockSuite(t) // neither a fair nor a read-write lock runs on Redlock
	for _, kind := range []string{"fair", "reader"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			p, rdb := lostReplyRedis(t, 10*time.Millisecond)
			key := testKey(t, rdb, "lost-"+kind+"-release")
			c := newClient(t, rdb, nil)
			obtain := func() *dlock.Lock {
				t.Helper()
				var (
					l   *dlock.Lock
					err error
				)
				if kind == "fair" {
					l, err = c.ObtainFair(context.Background(), key, 5*time.Second, nil)
				} else {
					l, err = c.RW(key).RLock(context.Background(), 5*time.Second, nil)
				}
				if err != nil {
					t.Fatalf("obtain: %v", err)
				}
				return l
			}
			mustRelease(t, obtain()) // Redis has the scripts: the cut call runs one
			holder := obtain()
			cut := p.CutReply(carries(holder.Token()))
			if err := holder.Release(context.Background()); err != nil {
				t.Errorf("Release retried after its reply was lost = %v, want nil", err)
			}
			cut.Await(t, time.Second)
			mustRelease(t, obtain()) // the key is free
		})
	}
}
