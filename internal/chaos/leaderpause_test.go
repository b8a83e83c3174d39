//go:build linux

package chaos_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// TestPausedLeaderAfterStatement: a batch leader is frozen (SIGSTOP) after its statements
// ran in PostgreSQL and before their answer reached it, and stays frozen past its lease
// (LOCK_TTL 300ms). Its PostgreSQL replies go through a proxy that holds them back, so the
// test sees that moment in pg_stat_activity: the leader's session idle in its transaction,
// its last statement the batch's sell statement. Another process takes the lock meanwhile
// and queues on the product's row, which the frozen transaction holds. On SIGCONT the
// leader's watchdog finds its deadline passed while the statement's answer waits in the
// socket: whichever wins, the batch commits (its fence was checked under the row lock) and
// its buyers get 201, or it is abandoned before COMMIT and they get 503 with nothing
// written. Either way every answer must match PostgreSQL.
func TestPausedLeaderAfterStatement(t *testing.T) {
	log := faultTest(t)
	b, _ := sharedBackend(t)
	px, proxied := b.proxyPostgres(t)
	px.SetReplyLatency(300 * time.Millisecond)
	victim, other := b.startPair(t, "victim", withParam(t, proxied, "application_name", "victim"),
		map[string]string{"LOCK_TTL": "300ms", "LOCK_WAIT": "1s", "PURCHASE_TIMEOUT": "3s"})
	// Stock enough for both rounds: the other process's buyers sell while the victim is
	// frozen and until they are halted, and a round without stock left never reaches the
	// sell statement (a CI run sold 60 in round 1).
	s := newSale(t, other, b.dsn, product{strategy: "dlock", stock: 400, thinkMS: 0})

	for round := 1; round <= 2; round++ {
		stock := s.pgStock(t)
		log("round %d: stock %d", round, stock)
		if stock == 0 {
			t.Fatalf("round %d: sold out before the round; the test needs more stock", round)
		}
		g := s.start(2, victim)
		testenv.Eventually(t, 20*time.Second, "a batch of the victim between its statements and their answer", func() bool {
			return sellAnswerPending(t, s)
		})
		victim.Signal(syscall.SIGSTOP)
		frozen := s.inflightUsers(victim.Name)
		log("round %d: victim frozen with buyers %v in flight", round, frozen)
		o := s.start(4, other)
		time.Sleep(time.Second) // the fault: frozen past the lease, its row lock held
		victim.Signal(syscall.SIGCONT)
		o.halt() // no new buyers of the other process: stock is kept for the next round
		g.stop()
		o.stop()
		pg := s.auditPG(t)
		for _, u := range frozen {
			a, _ := s.answerOf(u)
			log("round %d: frozen batch's buyer %d answered %s, has an order: %v", round, u, a.outcome(), pg.buyers[u])
		}
		testenv.Eventually(t, 20*time.Second, "the victim ready again after SIGCONT", func() bool { return ready(t, victim) == nil })
	}
	s.finish(t, other) // the victim's replies are slowed by the proxy: selling the rest there takes minutes
	log("sold out: %s", s.summary())
	s.verify(t, other, noneUnanswered)
}

// sellAnswerPending reports whether a session of the victim has run a batch's sell statement
// and waits, in its transaction, for the client's next word (the answer is held back).
func sellAnswerPending(t *testing.T, s *sale) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var n int
	// The sell statement is known by its first line: pg_stat_activity cuts texts at 1 KiB.
	err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE application_name = 'victim' AND state = 'idle in transaction' AND query LIKE '-- sell:%'`).Scan(&n)
	if err != nil {
		t.Fatalf("pg_stat_activity: %v", err)
	}
	return n > 0
}
