//go:build linux

package chaos_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// leaderTx starts the victim, whose PostgreSQL replies a proxy of the test's holds back
// (300 ms a chunk), so that each of its batches spends that long inside its transaction
// between the sell statement and COMMIT, and the other process, on PostgreSQL directly. It
// puts a dlock product on sale and returns the two processes, the sale, the fence log and
// the processes' session names.
func leaderTx(t *testing.T, env map[string]string) (victim, other *apiProc, s *sale, fences *fenceLog, apps pgApps) {
	t.Helper()
	b, _ := sharedBackend(t)
	fences = newFenceLog(t, b.dsn)
	px, proxied := b.proxyPostgres(t)
	px.SetReplyLatency(300 * time.Millisecond)
	apps = newPGApps()
	victim = apps.launch(t, b, "victim", withEnv(env, "DATABASE_URL", proxied))
	other = apps.launch(t, b, "other", env)
	victim.WaitReady("/readyz")
	other.WaitReady("/readyz")
	s = newSale(t, other, b.dsn, product{strategy: "dlock", stock: 400, thinkMS: 0})
	return victim, other, s, fences, apps
}

// openSellTx waits until a session named app has run a batch's sell statement inside its
// transaction and waits there for the client's next word, and returns that session's backend
// pid. It went idle less than 150 ms ago: the statement's answer is still held back by the
// proxy (300 ms), so the client has not read it, and cannot have sent COMMIT, when the caller
// strikes right after.
func openSellTx(t *testing.T, s *sale, app string) int {
	t.Helper()
	var pid int
	testenv.Eventually(t, 20*time.Second, "a batch of "+app+" inside its transaction, its sell statement run, COMMIT not sent", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		// The sell statement is known by its first line: pg_stat_activity cuts texts at 1 KiB.
		err := s.db.QueryRowContext(ctx, `SELECT pid FROM pg_stat_activity
			WHERE application_name = $1 AND state = 'idle in transaction' AND query LIKE '-- sell:%'
			AND clock_timestamp() - state_change < interval '150 milliseconds' LIMIT 1`, app).Scan(&pid)
		return err == nil
	})
	return pid
}

// sessionGone reports whether the backend pid has ended.
func sessionGone(t *testing.T, s *sale, pid int) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE pid = $1`, pid).Scan(&n); err != nil {
		t.Fatalf("pg_stat_activity: %v", err)
	}
	return n == 0
}

// lockWaiters counts the sessions named app that wait for a lock in PostgreSQL (a row lock:
// the product row that the frozen transaction holds).
func lockWaiters(t *testing.T, s *sale, app string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE application_name = $1 AND wait_event_type = 'Lock'`, app).Scan(&n); err != nil {
		t.Fatalf("pg_stat_activity: %v", err)
	}
	return n
}

// TestLeaderKilledMidTransaction: a batch leader is killed (SIGKILL) inside its transaction:
// BEGIN, the product row locked and the sell statement run, COMMIT not sent (its PostgreSQL
// replies are held back, and pg_stat_activity shows its session idle in that transaction,
// the sell its last statement). The kernel closes its connections; PostgreSQL sees the
// client gone and rolls the transaction back, which frees the product row, and the lock's key
// expires after its lease. None of the killed process's buyers in flight has an order; the
// other process takes the lock with a newer fence and sells out.
func TestLeaderKilledMidTransaction(t *testing.T) {
	log := faultTest(t)
	victim, other, s, fences, apps := leaderTx(t, map[string]string{"LOCK_TTL": "500ms", "LOCK_WAIT": "2s"})
	g := s.start(2, victim)
	s.start(2, other)
	s.waitBought(t, 4)
	pid := openSellTx(t, s, apps.of(victim.Name))
	inflight := s.inflightUsers(victim.Name) // before the kill: a request cut by it is answered (none) at once
	killed := time.Now()
	victim.Kill()
	g.stop()
	log("killed %s inside a batch's transaction (PostgreSQL backend %d); its buyers in flight: %v", victim.Name, pid, inflight)
	testenv.Eventually(t, 10*time.Second, "PostgreSQL to end the killed leader's session", func() bool { return sessionGone(t, s, pid) })
	log("its session ended %v after the kill", time.Since(killed).Round(time.Millisecond))

	testenv.Eventually(t, 20*time.Second, other.Name+" sells after the kill", func() bool {
		return writesBy(fences.writes(t, s.id), apps.of(other.Name), killed) >= 2
	})
	first := writesBetween(fences.writes(t, s.id), killed, time.Now())[0]
	log("first write after the kill: %v later, by %s", first.at.Sub(killed).Round(time.Millisecond), first.app)
	pg := s.auditPG(t)
	for _, u := range inflight {
		if pg.buyers[u] {
			t.Errorf("buyer %d was in flight on %s when it was killed mid-transaction, and has an order", u, victim.Name)
		}
	}

	s.finish(t, other)
	s.verify(t, other, unansweredBy(victim))
	fences.checkIncreasing(t, s.id)
}

// TestLeaderPausedMidTransaction: a batch leader is frozen (SIGSTOP) inside its transaction
// (as in TestLeaderKilledMidTransaction) for 6 s, past its lease (LOCK_TTL 300ms) and past its
// purchase deadline (PURCHASE_TIMEOUT 2s). Its transaction holds the product row (FOR
// UPDATE), so the other process, which takes the lock once the lease runs out, waits in
// PostgreSQL for that row: a frozen leader (or a hung one, or one cut off by a partition that
// sends no reset, until TCP keepalive gives up after hours) would stop the product's sale
// everywhere for as long as it stays so. PostgreSQL ends a batch's transaction that waits on
// its client past the batch's deadline (idle_in_transaction_session_timeout, set by the batch
// to PURCHASE_TIMEOUT + 1s), which frees the row: the other process sells again while the
// leader is still frozen. On SIGCONT the frozen batch finds its session gone and its buyers
// are answered 503 with nothing written.
func TestLeaderPausedMidTransaction(t *testing.T) {
	log := faultTest(t)
	env := map[string]string{"LOCK_TTL": "300ms", "LOCK_WAIT": "1s", "PURCHASE_TIMEOUT": "2s"}
	victim, other, s, fences, apps := leaderTx(t, env)
	// The victim's buyers wait out the freeze: theirs is an answer after SIGCONT, not a client
	// timeout that a loaded machine can bring first.
	g := s.launchWith(2, false, patient, []*apiProc{victim})
	o := s.start(2, other)
	s.waitBought(t, 4)
	pid := openSellTx(t, s, apps.of(victim.Name))
	victim.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	frozen := s.inflightUsers(victim.Name)
	log("froze %s inside a batch's transaction (PostgreSQL backend %d); its buyers in flight: %v", victim.Name, pid, frozen)

	waiting := 0
	testenv.Eventually(t, 5*time.Second, other.Name+" waiting in PostgreSQL for the product row", func() bool {
		waiting = lockWaiters(t, s, apps.of(other.Name))
		return waiting > 0
	})
	log("%s: %d sessions wait for the row lock %v after the freeze", other.Name, waiting, time.Since(stopped).Round(time.Millisecond))
	time.Sleep(time.Until(stopped.Add(6 * time.Second))) // the fault: frozen 6 s
	gone := sessionGone(t, s, pid)
	ws := fences.writes(t, s.id)
	sold := writesBetween(ws, stopped, time.Now())
	victim.Signal(syscall.SIGCONT)
	if !gone || len(sold) == 0 {
		gap, _ := longestGap(ws, stopped, time.Now())
		t.Fatalf("after 6 s frozen inside its transaction, the leader's session ended: %v; writes since the freeze: %d (nothing sold for %v): "+
			"a frozen leader stops the product's sale everywhere while its transaction holds the row", gone, len(sold), gap.Round(time.Millisecond))
	}
	log("the frozen leader's session was ended by PostgreSQL; %s sold again %v after the freeze (%d writes while the victim was frozen)",
		other.Name, sold[0].at.Sub(stopped).Round(time.Millisecond), len(sold))

	testenv.Eventually(t, 20*time.Second, "the frozen buyers answered after SIGCONT", func() bool {
		return !anyIn(s.inflightUsers(victim.Name), frozen)
	})
	g.stop()
	o.stop()
	pg := s.auditPG(t)
	for _, u := range frozen {
		a, _ := s.answerOf(u)
		log("frozen buyer %d answered %s, has an order: %v", u, a.outcome(), pg.buyers[u])
	}
	log("answers: %s", s.summary())

	s.finish(t, other)
	s.verify(t, other, noneUnanswered)
	fences.checkIncreasing(t, s.id)
	noErrorsLogged(t, victim, other)
}
