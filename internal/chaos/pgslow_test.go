//go:build linux

package chaos_test

import (
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// TestPostgresSlowMidBatch: two API processes reach PostgreSQL through a TCP proxy of the
// test's that delays every chunk, so that each batch's statements are in flight for a long
// time, and take their locks in a Redis of the test's own. Two faults then strike while
// statements are in flight:
//   - the lock's lease runs out: Redis is frozen (SIGSTOP) for longer than LOCK_TTL, so
//     every holder's watchdog gives up and cancels its work mid-statement;
//   - the leader's budget runs out: a batch's two round trips take longer than
//     PURCHASE_TIMEOUT (2s).
//
// A statement abandoned by the client still reaches PostgreSQL (the proxy delivers what it
// has read) and runs to its end. Whatever the timing, every answer must be true: a 201 has
// its order, and no error answer hides one.
func TestPostgresSlowMidBatch(t *testing.T) {
	log := faultTest(t)
	b, red := ownRedis(t)
	px, apis := b.startProxiedAPIs(t, 2, map[string]string{"LOCK_TTL": "300ms", "LOCK_WAIT": "1s", "PURCHASE_TIMEOUT": "2s"})
	s := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 400, thinkMS: 0})
	s.start(8, apis...)
	s.waitBought(t, 10)
	log("selling: %s", s.summary())

	before := s.counts()
	px.SetLatency(250 * time.Millisecond) // a round trip: at least 0.5 s; a batch, 1 s
	time.Sleep(300 * time.Millisecond)    // batches are now in flight
	red.Pause()
	time.Sleep(time.Second) // the fault: leases (300ms) run out mid-statement
	red.Resume()
	testenv.Eventually(t, 20*time.Second, "answers after the lease fault", answeredSince(s, before, 8))
	log("lease lost mid-statement: %s", diff(s.counts(), before))

	before = s.counts()
	px.SetLatency(700 * time.Millisecond) // a batch's two round trips: 2.8 s, past PURCHASE_TIMEOUT
	time.Sleep(3 * time.Second)           // the fault: leaders' budgets run out mid-statement
	px.SetLatency(0)
	log("budget ran out mid-statement: %s", diff(s.counts(), before))

	s.finish(t, apis...)
	log("sold out: %s", s.summary())
	s.verify(t, apis[1], noneUnanswered)
}

// answeredSince returns a condition that holds once n more requests were answered, whatever
// the answer, than the counts in before.
func answeredSince(s *sale, before map[string]int, n int) func() bool {
	total := func(c map[string]int) (sum int) {
		for _, v := range c {
			sum += v
		}
		return sum
	}
	start := total(before)
	return func() bool { return total(s.counts()) >= start+n }
}
