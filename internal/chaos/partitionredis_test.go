//go:build linux

package chaos_test

import (
	"context"
	"testing"
	"time"
)

// TestSilentPartitionFromRedis: three API processes sell a dlock, a redis and a queue
// product; one of them, in a network namespace of its own, is cut off from Redis silently
// (its packets dropped, no RST, no ICMP) for 8 s, then healed. The cut is made while that
// process holds the lock of a fourth product, dlock too, inside its critical section
// (think_ms 1500): its lease (LOCK_TTL 500ms) cannot be renewed and runs out, another process
// takes the lock under a newer fence and sells, and the cut-off holder's late write must not
// land (Kleppmann's example, caused by the network instead of a pause). The cut-off process answers every
// purchase within its bound (PURCHASE_TIMEOUT + order.AfterDeadline), with 503s carrying
// Retry-After, never a 500; the others go on selling; once healed it sells again; and every
// sale verifies: no oversell, no duplicate, 201 ⇔ order, the retry rule.
func TestSilentPartitionFromRedis(t *testing.T) {
	log := faultTest(t)
	b, rdb := sharedBackend(t)
	env := map[string]string{"LOCK_TTL": "500ms", "LOCK_WAIT": "1s", "PURCHASE_TIMEOUT": "2s"}
	cut := b.startInNetns(t, "cut", b.dsn, env)
	apis := b.startAPIs(t, 2, env)
	all := []*apiProc{apis[0], apis[1], cut.apiProc}
	// The held product: think_ms 1500 outlasts the lease, so that a holder cut off from Redis
	// in its critical section loses its lock before it writes. Only the process to cut buys
	// it until then.
	held := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 12, thinkMS: 1500})
	held.launchWith(1, false, patient, []*apiProc{cut.apiProc})
	sales := []*sale{held}
	for _, strategy := range []string{"dlock", "redis", "queue"} {
		s := newSale(t, apis[0], b.dsn, product{strategy: strategy, stock: 600, thinkMS: 50})
		s.start(1, apis...)
		s.launchWith(2, false, patient, []*apiProc{cut.apiProc})
		sales = append(sales, s)
	}
	for _, s := range sales {
		s.waitBought(t, 1)
		s.sellsAgain(t, cut.apiProc, time.Time{})
	}
	log("selling through %s (in %s, at %s) and %s, %s", cut.Name, cut.ns.Name, cut.ns.Inside, apis[0].Name, apis[1].Name)

	key := b.keys().Lock(held.id)
	waitNewHolder(t, "a new holder of the held product's lock", func() string { return rdb.Get(context.Background(), key).Val() })
	onset := time.Now()
	cut.ns.Partition(cut.redis)
	victims := held.inflightUsers(cut.Name)
	log("%s cut off from Redis (%s) holding the held product's lock; its buyer in flight: %v", cut.Name, cut.redis, victims)
	takeover := held.start(1, apis...)
	time.Sleep(partitionFor)
	cut.ns.Heal()
	healed := time.Now()
	log("healed")

	for _, s := range sales {
		ph := s.answersOf(cut.Name, onset, healed)
		others := s.soldBy(cut.Name, onset, healed)
		log("  %s (think_ms %d): %s answered %s; the others sold %d meanwhile", s.strategy, s.thinkMS, cut.Name, ph, others)
		if ph.slowest > answerBound {
			t.Errorf("%s: %s took %v to answer a purchase, more than its bound %v", s.strategy, cut.Name, ph.slowest, answerBound)
		}
		if !ph.failed {
			t.Errorf("%s: %s answered nothing but success while cut off from Redis", s.strategy, cut.Name)
		}
		if others == 0 {
			t.Errorf("%s: the other processes sold nothing while %s was cut off from Redis", s.strategy, cut.Name)
		}
	}
	for _, u := range victims {
		a, _ := held.answerOf(u)
		log("  held: %s's buyer %d, in flight at the cut, was answered %s after %v", cut.Name, u, a.outcome(), a.done.Sub(a.sent).Round(time.Millisecond))
	}
	if lost := cut.Metric("seckill_lock_lost_total", ""); lost == 0 {
		t.Errorf("%s lost no lock: the cut did not find it holding the held product's lock", cut.Name)
	} else {
		log("  held: %s found %v held locks lost (seckill_lock_lost_total)", cut.Name, lost)
	}
	// The others took the held product over to show that its lock moved on; they stop now,
	// so that whether the healed process sells it again is not a contest it must win (each
	// buyer holds the lock 1.5 s, longer than a waiter's LOCK_WAIT: with three processes
	// after it, the healed one, whose lock notifications come back last, lost every try for
	// 30 s in 1 of 4 runs).
	takeover.stop()
	for _, s := range sales {
		log("  %s: %s sells again %v after healing", s.strategy, cut.Name, s.sellsAgain(t, cut.apiProc, healed).Round(time.Millisecond))
	}
	finishAll(t, log, sales, all)
	noErrorsLogged(t, all...)
}

// answerBound is the longest a purchase may take in these tests: PURCHASE_TIMEOUT (2s) and
// order.AfterDeadline (10s), with a second of room for a loaded machine.
const answerBound = 13 * time.Second
