//go:build linux

package chaos_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv"
)

// fairQueue is the queue of a fair lock's waiters as the test sees it in Redis (see
// dlock.ObtainFair: a list of tokens next to the key, oldest first), and a holder of the
// lock of the test's own, with which the test decides when the lock is released.
type fairQueue struct {
	rdb   *redis.Client
	key   string // the lock key
	queue string // its queue: key + ":queue" (the key has a hash tag)
	locks *dlock.Client
	ev    *keyEvents
}

// head returns the token at the head of the queue ("" when it is empty) and its length.
func (q *fairQueue) head(t *testing.T) (string, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var first *redis.StringCmd
	var n *redis.IntCmd
	if _, err := q.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		first, n = p.LIndex(ctx, q.queue, 0), p.LLen(ctx, q.queue)
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("read the fair queue: %v", err)
	}
	return first.Val(), n.Val()
}

// hold takes the lock as a waiter like any other (behind those queued already), with a lease
// long enough for the test to set the queue up behind it.
func (q *fairQueue) hold(t *testing.T) *dlock.Lock {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := q.locks.ObtainFair(ctx, q.key, 20*time.Second, &dlock.Options{Wait: 10 * time.Second})
	if err != nil {
		t.Fatalf("the test's own hold of the fair lock: %v", err)
	}
	return l
}

// queueBehind has the test hold the lock, then starts one buyer on head and waits until its
// batch's leader heads the queue, then two on behind and waits until they are queued after
// it. It returns the head's token and the two groups of buyers.
func (q *fairQueue) queueBehind(t *testing.T, s *sale, head, behind *apiProc) (*dlock.Lock, string, *group, *group) {
	t.Helper()
	l := q.hold(t)
	gh := s.start(1, head)
	var tok string
	testenv.Eventually(t, 5*time.Second, head.Name+"'s leader queued for the held lock", func() bool {
		var n int64
		tok, n = q.head(t)
		return n == 1
	})
	gb := s.start(2, behind)
	testenv.Eventually(t, 5*time.Second, behind.Name+"'s leader queued behind it", func() bool {
		first, n := q.head(t)
		return n >= 2 && first == tok
	})
	return l, tok, gh, gb
}

// release releases the test's hold and returns when, and how long until the lock was next
// granted (a set of the key, seen in Redis's notifications).
func (q *fairQueue) release(t *testing.T, l *dlock.Lock) (time.Time, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := l.Release(ctx); err != nil {
		t.Fatalf("release the test's hold: %v", err)
	}
	released := time.Now()
	var granted time.Time
	testenv.Eventually(t, 10*time.Second, "the lock granted after the release", func() bool {
		for _, e := range q.ev.ops() {
			if e.op == "set" && e.at.After(released) {
				granted = e.at
				return true
			}
		}
		return false
	})
	return released, granted.Sub(released)
}

// TestFairHeadWaiterKilled: on a fair product (dlock's ObtainFair: one queue of waiters in
// Redis across processes, the release waking only the head), the process whose batch leader
// heads the queue is killed (SIGKILL) while the lock is held, with the other process's leader
// queued behind it. The release then wakes a dead waiter; the live one behind it keeps asking
// (every MaxBackoff) and is granted the lock once the dead head's place times out (it stopped
// renewing it: 1 s after its last call), which drops it from the queue. The test measures that
// stall against a control round with a live head, and checks the sale (the other process's
// buyers wait up to LOCK_WAIT, 1 s, the default) and every fence.
func TestFairHeadWaiterKilled(t *testing.T) {
	log := faultTest(t)
	b, red := ownRedis(t, keyEventsConfig...)
	fences := newFenceLog(t, b.dsn)
	apps := newPGApps()
	apis := apps.start(t, b, map[string]string{"LOCK_TTL": "500ms", "LOCK_WAIT": "1s"}, "head", "behind")
	head, behind := apis[0], apis[1]
	s := newSale(t, behind, b.dsn, product{strategy: "dlock", stock: 150, thinkMS: 5, fair: true})
	rdb := red.Client()
	locks := dlock.New(rdb, nil)
	t.Cleanup(func() { _ = locks.Close() })
	key := b.keys().Lock(s.id)
	q := &fairQueue{rdb: rdb, key: key, queue: key + ":queue", locks: locks, ev: watchKey(t, rdb, key)}

	s.start(2, apis...)
	s.waitBought(t, 10)
	s.stopAll()

	// The control: the head is alive, and the release wakes it at once.
	l, tok, gh, gb := q.queueBehind(t, s, head, behind)
	_, control := q.release(t, l)
	if first, _ := q.head(t); first == tok {
		t.Fatalf("the live head %s still queued after the release", tok)
	}
	gh.stop()
	gb.stop()
	log("control: the lock granted %v after the release, to the live head", control.Round(time.Microsecond))

	before := s.counts()
	l, tok, gh, gb = q.queueBehind(t, s, head, behind)
	// Released at once, not after the process is reaped: the release then finds the dead
	// head's place as fresh as it can be, and the stall is the longest a dead head causes.
	killed := time.Now()
	head.Signal(syscall.SIGKILL)
	gh.halt() // its buyer in flight gets no answer; send no more to a dead process
	released, stall := q.release(t, l)
	if !head.Wait(10 * time.Second) {
		t.Fatalf("%s still running 10s after SIGKILL", head.Name)
	}
	gh.stop()
	var dropped time.Time
	testenv.Eventually(t, 10*time.Second, "the dead head dropped from the queue", func() bool {
		first, _ := q.head(t)
		dropped = time.Now()
		return first != tok
	})
	log("killed %s heading the queue, released %v later; the lock was granted %v after the release (the dead head dropped by %v after the kill)",
		head.Name, released.Sub(killed).Round(time.Millisecond), stall.Round(time.Millisecond), dropped.Sub(killed).Round(time.Millisecond))
	if stall > 2*time.Second {
		t.Errorf("the lock was granted %v after the release past a dead head: more than its place's timeout (1 s) allows", stall)
	}
	gb.stop()
	log("answers of the round with the dead head: %s", diff(s.counts(), before))

	s.finish(t, behind)
	s.verify(t, behind, unansweredBy(head))
	fences.checkIncreasing(t, s.id)
}
