//go:build linux

package chaos_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv/faultproxy"
)

// TestSilentPartitionFromPostgres: three API processes; one, in a network namespace of its
// own, reaches PostgreSQL through a forwarder on the namespace's host end and a proxy of the
// test's behind it. For each of the dlock, redis and queue strategies in turn, a sale runs
// through all three; the proxy holds back the next COMMIT the cut-off-to-be process sends,
// the process is cut off from PostgreSQL silently (no RST, no ICMP), and the COMMIT is let
// go: it reaches PostgreSQL and commits, and its answer is lost in the partition. The
// process cannot know: past the COMMIT's bound it asks PostgreSQL on another connection,
// which the partition drops too, so it must answer that purchase 503 outcome_unknown (or,
// for the queue, leave the purchase queued for another consumer), answer every other within
// its bound, and the lookup and the retry must agree with PostgreSQL. After 13 s the
// partition heals; the process sells again and each sale verifies: no oversell, no
// duplicate, 201 ⇔ order, the retry rule.
func TestSilentPartitionFromPostgres(t *testing.T) {
	log := faultTest(t)
	b, _ := sharedBackend(t)
	px, dsn := b.proxyPostgres(t)
	env := map[string]string{"LOCK_TTL": "500ms", "LOCK_WAIT": "1s", "PURCHASE_TIMEOUT": "2s"}
	cut := b.startInNetns(t, "cut", dsn, env)
	apis := b.startAPIs(t, 2, env)
	all := []*apiProc{apis[0], apis[1], cut.apiProc}
	// The others sell on while the process is cut off (about 23 dlock units a second on an
	// idle 2-core machine; the queue's through their consumers too): stock enough that none is
	// sold out before the partition heals, or the cut process has nothing left to sell again.
	for _, p := range []product{{strategy: "dlock", stock: 700, thinkMS: 20}, {strategy: "redis", stock: 1500, thinkMS: 20}, {strategy: "queue", stock: 1500, thinkMS: 20}} {
		strategy := p.strategy
		s := newSale(t, apis[0], b.dsn, p)
		s.start(1, apis...)
		s.launchWith(2, false, patient, []*apiProc{cut.apiProc})
		s.waitBought(t, 2)
		s.sellsAgain(t, cut.apiProc, time.Time{})
		settled := cut.Metric("seckill_commits_settled_total", "")

		onset := cutAt(t, px, cut, commit)
		log("%s: %s cut off from PostgreSQL (%s) with a COMMIT in flight: it reached PostgreSQL, its answer is lost", strategy, cut.Name, cut.pg)
		time.Sleep(pgPartitionFor)
		cut.ns.Heal()
		healed := time.Now()
		s.awaitAnswered(t, cut.Name)
		ph := s.answersOf(cut.Name, onset, healed)
		log("  %s: %s answered %s; the others sold %d meanwhile; COMMITs it asked PostgreSQL about: %v",
			strategy, cut.Name, ph, s.soldBy(cut.Name, onset, healed), cut.Metric("seckill_commits_settled_total", "")-settled)
		if ph.slowest > answerBound {
			t.Errorf("%s: %s took %v to answer a purchase, more than its bound %v", strategy, cut.Name, ph.slowest, answerBound)
		}
		log("  %s: %s sells again %v after healing", strategy, cut.Name, s.sellsAgain(t, cut.apiProc, healed).Round(time.Millisecond))
		finishAll(t, log, []*sale{s}, all)
	}
	noErrorsLogged(t, all...)
}

// pgPartitionFor is how long a partition from PostgreSQL lasts: past a purchase's deadline
// (PURCHASE_TIMEOUT 2s) and order.AfterDeadline (10s: the COMMIT's answer waited for, then
// PostgreSQL asked what became of it), so that the process gives up asking before it heals.
const pgPartitionFor = 13 * time.Second

// cutAt makes the proxy behind p's forwarder to PostgreSQL hold back the next chunk p sends
// that match accepts, cuts p off from PostgreSQL once it is held, and lets it go on: it
// reaches PostgreSQL and runs, and the answer is lost in the partition. It returns when the
// partition began.
func cutAt(t *testing.T, px *faultproxy.Proxy, p *cutProc, match func([]byte) bool) time.Time {
	t.Helper()
	h := px.HoldNext(match)
	h.Await(t, 20*time.Second)
	onset := time.Now()
	p.ns.Partition(p.pg)
	h.Release()
	return onset
}

// commit matches a chunk holding a COMMIT sent as a simple query, as pgx sends it.
func commit(chunk []byte) bool {
	for typ, body := range pgMessages(chunk) {
		if typ == 'Q' && bytes.EqualFold(bytes.TrimRight(body, "\x00"), []byte("COMMIT")) {
			return true
		}
	}
	return false
}

// pgMessages yields the type and body of each whole message of PostgreSQL's frontend
// protocol at the start of chunk.
func pgMessages(chunk []byte) func(yield func(byte, []byte) bool) {
	return func(yield func(byte, []byte) bool) {
		for len(chunk) >= 5 {
			n := int(binary.BigEndian.Uint32(chunk[1:5]))
			if n < 4 || 1+n > len(chunk) || !yield(chunk[0], chunk[5:1+n]) {
				return
			}
			chunk = chunk[1+n:]
		}
	}
}
