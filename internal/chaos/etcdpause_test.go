//go:build linux

package chaos_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// TestEtcdPausedHolderIsFenced is TestPausedHolderIsFenced with the product locks in etcd:
// an API process is frozen (SIGSTOP) right after it took the product's lock, inside its
// critical section (think_ms 500), and stays frozen for 5s, well past its lease (LOCK_TTL
// 2s, etcd's shortest). etcd expires its lease and deletes its key, and another process takes
// the lock under a newer fence and sells. When the frozen process resumes (SIGCONT), its
// think is over and its lease is gone at once: either its keep-alive reports the loss first
// and the batch ends before its transaction, or its statement runs and the fence, older than
// the one on the row, makes it write nothing. Its buyer is answered 503 busy, and has no order.
func TestEtcdPausedHolderIsFenced(t *testing.T) {
	log := faultTest(t)
	b, _ := sharedBackend(t)
	app := testenv.Name("etcdpause") // names the paused process's sessions in pg_stat_activity
	paused, other, s, lock := b.startEtcdPair(t, "paused", withParam(t, b.dsn, "application_name", app), 500)
	apis := []*apiProc{paused, other}

	// One buyer at a time through the process to pause: a new holder's key is that buyer's
	// purchase entering its critical section.
	first := s.start(1, paused)
	s.waitBought(t, 1)
	fence := waitNewHolder(t, "a new lock holder on "+paused.Name, func() int64 { return lock.fence(t) })
	stopped, victim := s.freeze(t, paused)
	log("%s frozen holding the lock with fence %d, buyer %d in flight", paused.Name, fence, victim)
	lock.waitExpired(t, log, fence, stopped)

	s.sellsNewer(t, other)
	newer := s.auditPG(t).Fence
	if newer <= fence {
		t.Fatalf("fence on the row %d, want more than the paused holder's %d", newer, fence)
	}
	time.Sleep(time.Until(stopped.Add(5 * time.Second))) // the fault: frozen 5s in all
	paused.Signal(syscall.SIGCONT)
	resumed := time.Now()
	log("%s resumed after %v; %s wrote fence %d meanwhile", paused.Name, time.Since(stopped).Round(time.Millisecond), other.Name, newer)
	first.stop()

	a := s.lateBuyerBusy(t, victim)
	// How far its batch got, from its sessions' last statements since SIGCONT: none, or only
	// the ping of a connection taken from the pool, means the loss ended the batch before its
	// transaction; TestEtcdLateWriteIsFenced shows the fence when the statements do run.
	log("%s after SIGCONT: buyer answered %s after %v; its sessions' statements since: %q; seckill_lock_lost_total %v",
		paused.Name, a.outcome(), a.done.Sub(a.sent).Round(time.Millisecond), sessions(t, s, app, "%", resumed),
		paused.Metric("seckill_lock_lost_total", ""))

	s.finish(t, apis...)
	s.verify(t, other, noneUnanswered)
}

// sessions lists, as "state: first line of the last statement", the PostgreSQL sessions
// named app whose last statement began after since and is like query.
func sessions(t *testing.T, s *sale, app, query string, since time.Time) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := s.db.QueryContext(ctx, `SELECT state || ': ' || split_part(query, E'\n', 1) FROM pg_stat_activity
		WHERE application_name = $1 AND query LIKE $2 AND query_start > $3`, app, query, since)
	if err != nil {
		t.Fatalf("pg_stat_activity: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			t.Fatalf("pg_stat_activity: %v", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("pg_stat_activity: %v", err)
	}
	return out
}
