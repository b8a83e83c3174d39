//go:build linux

package chaos_test

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// cohortEnv is the environment of the cohort tests' processes: a lease short enough for the
// fault to outlive, and a wait long enough for the other process's buyers to outlive the
// lease of a holder that died.
var cohortEnv = map[string]string{"LOCK_TTL": "400ms", "LOCK_WAIT": "2s"}

// cohortPair starts the victim, which hands its product locks over to its next local batch up
// to 8 times in a row (LOCK_COHORT 8), and others that never do (LOCK_COHORT 0), so that a
// handoff seen in Redis's notifications is the victim's. The victim serves one buyer a batch
// (BATCH_MAX 1): its buyers' leaders then queue behind each other in its local queue, and
// each release finds one to hand over to (with group commit, the next batch seldom has its
// leader waiting yet when the holder releases, and a streak was once not seen in 30 s). It puts a dlock product on sale
// (think_ms 30: each hold lasts long enough for the fault to land inside it) and returns the
// sale, the notifications about its lock key, and the fence log.
func cohortPair(t *testing.T, others int) (victim *apiProc, rest []*apiProc, s *sale, ev *keyEvents, fences *fenceLog, apps pgApps) {
	t.Helper()
	b, red := ownRedis(t, keyEventsConfig...)
	fences = newFenceLog(t, b.dsn)
	apps = newPGApps()
	victim = apps.launch(t, b, "victim", withEnv(withEnv(cohortEnv, "LOCK_COHORT", "8"), "BATCH_MAX", "1"))
	for i := range others {
		rest = append(rest, apps.launch(t, b, fmt.Sprintf("other%d", i+1), withEnv(cohortEnv, "LOCK_COHORT", "0")))
	}
	for _, p := range append([]*apiProc{victim}, rest...) {
		p.WaitReady("/readyz")
	}
	s = newSale(t, rest[0], b.dsn, product{strategy: "dlock", stock: 400, thinkMS: 30})
	ev = watchKey(t, red.Client(), b.keys().Lock(s.id))
	return victim, rest, s, ev, fences, apps
}

// inCohort waits until the product's lock is held by the victim's cohort: its holder got it
// by a handoff, with handoffs left before the bound (8) ends the streak.
func inCohort(t *testing.T, ev *keyEvents) int {
	t.Helper()
	var streak int
	testenv.Eventually(t, 30*time.Second, "the lock handed over within the victim (a cohort streak of 1 to 5)", func() bool {
		streak = ev.streak()
		return streak >= 1 && streak <= 5
	})
	return streak
}

// TestCohortHolderKilled: with lock cohorting on (LOCK_COHORT 8), the process whose cohort
// holds a product's lock is killed (SIGKILL) mid-sale, while it holds a lock one of its own
// batches handed it (handoff.lua), with batches of two other processes waiting in Redis. Its
// local waiters and any grant not taken yet die with it; nobody can release the key, which
// holds a token of the dead process until its lease runs out. Then the others take the lock,
// each with a fence above every one before, and finish the sale.
func TestCohortHolderKilled(t *testing.T) {
	log := faultTest(t)
	victim, rest, s, ev, fences, _ := cohortPair(t, 2)
	g := s.start(4, victim)
	s.start(4, rest...)
	s.waitBought(t, 10)
	streak := inCohort(t, ev)
	killed := time.Now()
	victim.Kill()
	g.stop() // its buyers in flight got no answer; send no more to a dead process
	log("killed %s holding the lock after %d handoffs in a row (%d handoffs so far)", victim.Name, streak, ev.handoffs())

	var expired time.Time
	var ok bool
	testenv.Eventually(t, 10*time.Second, "the killed cohort's lock to expire", func() bool {
		expired, streak, ok = ev.diedHolding(killed)
		return !expired.IsZero()
	})
	if !ok {
		t.Fatalf("the lock that expired after the kill was not handed over within the victim: the fault missed the cohort (events: %s)", ev)
	}
	log("the dead cohort's lock (%d handoffs in a row) expired %v after the kill (LOCK_TTL 400ms)",
		streak, expired.Sub(killed).Round(time.Millisecond))
	before := s.bought.Load()
	s.waitBought(t, before+4)
	log("the others sold on: %s", s.summary())

	s.finish(t, rest...)
	s.verify(t, rest[0], unansweredBy(victim))
	ws := fences.checkIncreasing(t, s.id)
	log("committed writes by process: %s", byApp(ws))
}

// TestCohortHolderPaused: the process whose cohort holds a product's lock is frozen (SIGSTOP)
// while it holds a lock handed over by one of its own batches, with its next batch waiting in
// its local queue, and stays frozen past the lease (1.5 s, LOCK_TTL 400ms). The lock expires
// in Redis and the other process sells under newer fences. On SIGCONT the frozen holder's
// watchdog finds its deadline passed: its batch is abandoned before COMMIT (or, had it
// written, the fence under the row lock would refuse it), its handoff to the next local batch
// finds the key no longer holds its token and hands nothing over, and the process takes the
// lock again the ordinary way and sells: neither a stale grant nor its local queue is left
// stuck.
func TestCohortHolderPaused(t *testing.T) {
	log := faultTest(t)
	victim, rest, s, ev, fences, apps := cohortPair(t, 1)
	other := rest[0]
	s.start(4, victim)
	s.start(4, other)
	s.waitBought(t, 10)
	streak := inCohort(t, ev)
	victim.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	frozen := s.inflightUsers(victim.Name)
	log("froze %s holding the lock after %d handoffs in a row; its buyers in flight: %v", victim.Name, streak, frozen)

	var expired time.Time
	var ok bool
	testenv.Eventually(t, 10*time.Second, "the frozen cohort's lease to expire", func() bool {
		expired, streak, ok = ev.diedHolding(stopped)
		return !expired.IsZero()
	})
	if !ok {
		t.Fatalf("the lock that expired during the freeze was not handed over within the victim: the fault missed the cohort (events: %s)", ev)
	}
	log("the frozen cohort's lease (%d handoffs in a row) expired %v after SIGSTOP", streak, expired.Sub(stopped).Round(time.Millisecond))
	testenv.Eventually(t, 10*time.Second, other.Name+" sells under a newer fence while the victim is frozen", func() bool {
		return writesBy(fences.writes(t, s.id), apps.of(other.Name), expired) >= 2
	})
	time.Sleep(time.Until(stopped.Add(1500 * time.Millisecond))) // the fault: frozen 1.5 s in all
	victim.Signal(syscall.SIGCONT)
	resumed := time.Now()

	testenv.Eventually(t, 20*time.Second, "the frozen buyers answered after SIGCONT", func() bool {
		return !anyIn(s.inflightUsers(victim.Name), frozen)
	})
	for _, u := range frozen {
		a, _ := s.answerOf(u)
		log("frozen buyer %d answered %s", u, a.outcome())
	}
	testenv.Eventually(t, 20*time.Second, victim.Name+" sells again after SIGCONT", func() bool {
		return writesBy(fences.writes(t, s.id), apps.of(victim.Name), resumed) >= 2
	})
	if lost := victim.Metric("seckill_lock_lost_total", ""); lost < 1 {
		t.Errorf("%s: seckill_lock_lost_total %v after a freeze past its lease, want at least 1", victim.Name, lost)
	}
	log("%s after SIGCONT: locks lost %v, release errors %v; it sells again", victim.Name,
		victim.Metric("seckill_lock_lost_total", ""), victim.Metric("seckill_lock_release_errors_total", ""))

	s.finish(t, victim, other)
	s.verify(t, other, noneUnanswered)
	ws := fences.checkIncreasing(t, s.id)
	log("committed writes by process: %s; handoffs in all %d", byApp(ws), ev.handoffs())
}

// writesBy counts the writes of ws by the sessions named app committed after since.
func writesBy(ws []fenceWrite, app string, since time.Time) int {
	n := 0
	for _, w := range ws {
		if w.app == app && w.at.After(since) {
			n++
		}
	}
	return n
}

// anyIn reports whether any of users is in set.
func anyIn(users, set []int64) bool {
	return slices.ContainsFunc(users, func(u int64) bool { return slices.Contains(set, u) })
}
