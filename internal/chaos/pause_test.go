//go:build linux

package chaos_test

import (
	"context"
	"errors"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/testenv"
)

// TestPausedHolderIsFenced: an API process is frozen (SIGSTOP) right after it took the
// product's lock, inside its critical section (think_ms 200), and stays frozen well past
// its lease (LOCK_TTL 300ms). Another process takes the lock and sells under a newer
// fence. When the frozen process resumes (SIGCONT), its late write must not land: the
// watchdog's deadline has passed, and PostgreSQL rejects its older fence anyway. Its buyer
// is answered 503 busy, and nothing of theirs is written.
func TestPausedHolderIsFenced(t *testing.T) {
	faultTest(t)
	b, rdb := sharedBackend(t)
	apis := b.startAPIs(t, 2, map[string]string{"LOCK_TTL": "300ms", "LOCK_WAIT": "2s"})
	paused, other := apis[0], apis[1]
	s := newSale(t, other, b.dsn, product{strategy: "dlock", stock: 20, thinkMS: 200})
	ctx := context.Background()
	key := b.keys().Lock(s.id)

	// One buyer at a time through the process to pause: a new lock token is that buyer's
	// purchase entering its critical section.
	first := s.start(1, paused)
	s.waitBought(t, 1)
	waitNewHolder(t, "a new lock holder on "+paused.Name, func() string { return rdb.Get(ctx, key).Val() })
	stopped, victim := s.freeze(t, paused)
	testenv.Eventually(t, 10*time.Second, "the paused holder's lease to expire", func() bool {
		return errors.Is(rdb.Get(ctx, key).Err(), redis.Nil)
	})
	t.Logf("lease of the paused holder expired %v after SIGSTOP", time.Since(stopped).Round(time.Millisecond))

	s.sellsNewer(t, other)
	fence := s.auditPG(t).Fence
	paused.Signal(syscall.SIGCONT)
	t.Logf("%s frozen for %v (LOCK_TTL 300ms); %s wrote fence %d meanwhile",
		paused.Name, time.Since(stopped).Round(time.Millisecond), other.Name, fence)
	first.stop()

	a := s.lateBuyerBusy(t, victim)
	t.Logf("%s after SIGCONT: buyer answered %s; seckill_lock_lost_total %v, purchases busy %v",
		paused.Name, a.outcome(), paused.Metric("seckill_lock_lost_total", ""),
		paused.Metric("seckill_purchases_total", `outcome="busy"`))

	s.finish(t, apis...)
	s.verify(t, other, noneUnanswered)
}

// waitNewHolder waits until holder names a lock holder (not the zero value) other than the
// one it named at first, and returns it: a purchase has just entered its critical section.
func waitNewHolder[H comparable](t *testing.T, what string, holder func() H) H {
	t.Helper()
	var none H
	prev, h := holder(), none
	testenv.Eventually(t, 10*time.Second, what, func() bool {
		h = holder()
		return h != none && h != prev
	})
	return h
}

// freeze stops p (SIGSTOP), caught inside its critical section, and returns when, and the
// buyer in flight on it; the test fails unless exactly one is.
func (s *sale) freeze(t *testing.T, p *apiProc) (time.Time, int64) {
	t.Helper()
	p.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	victims := s.inflightUsers(p.Name)
	if len(victims) != 1 {
		t.Fatalf("users in flight on the frozen %s = %v, want exactly one", p.Name, victims)
	}
	return stopped, victims[0]
}

// sellsNewer starts two buyers through p and waits until they bought two units: with the
// lock's holder frozen past its lease, p sells under a newer fence. It returns the buyers.
func (s *sale) sellsNewer(t *testing.T, p *apiProc) *group {
	t.Helper()
	g := s.start(2, p)
	testenv.Eventually(t, 20*time.Second, p.Name+" sells under a newer fence", func() bool { return g.bought.Load() >= 2 })
	return g
}

// lateBuyerBusy is the answer of user, the buyer of a holder paused past its lease: it must be
// 503 busy, with no order in PostgreSQL (the holder's late write did not land).
func (s *sale) lateBuyerBusy(t *testing.T, user int64) answer {
	t.Helper()
	a, ok := s.answerOf(user)
	if !ok {
		t.Fatalf("user %d of the paused holder got no answer", user)
	}
	if a.status != http.StatusServiceUnavailable || a.code != api.CodeBusy {
		t.Errorf("paused holder's buyer %d answered %s (%v), want 503 busy", a.user, a.outcome(), a.err)
	}
	if s.auditPG(t).buyers[a.user] {
		t.Errorf("paused holder's buyer %d has an order: its late write landed", a.user)
	}
	return a
}
