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
)

// TestPausedHolderIsFenced: an API process is frozen (SIGSTOP) right after it took the
// product's lock, inside its critical section (think_ms 200), and stays frozen well past
// its lease (LOCK_TTL 300ms). Another process takes the lock and sells under a newer
// fence. When the frozen process resumes (SIGCONT), its late write must not land: the
// watchdog's deadline has passed, and PostgreSQL rejects its older fence anyway. Its buyer
// is answered 503 busy, and nothing of theirs is written.
func TestPausedHolderIsFenced(t *testing.T) {
	skipShort(t)
	t.Parallel()
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
	prev, _ := rdb.Get(ctx, key).Result()
	waitFor(t, 10*time.Second, "a new lock holder on "+paused.Name, func() bool {
		v, _ := rdb.Get(ctx, key).Result()
		return v != "" && v != prev
	})
	paused.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	victims := s.inflightUsers(paused.Name)
	if len(victims) != 1 {
		t.Fatalf("users in flight on the paused process = %v, want exactly one", victims)
	}
	waitFor(t, 10*time.Second, "the paused holder's lease to expire", func() bool {
		return errors.Is(rdb.Get(ctx, key).Err(), redis.Nil)
	})
	t.Logf("lease of the paused holder expired %v after SIGSTOP", time.Since(stopped).Round(time.Millisecond))

	second := s.start(2, other)
	waitFor(t, 20*time.Second, other.Name+" sells under a newer fence", func() bool { return second.bought.Load() >= 2 })
	fence := s.auditPG(t).Fence
	paused.Signal(syscall.SIGCONT)
	t.Logf("%s frozen for %v (LOCK_TTL 300ms); %s wrote fence %d meanwhile",
		paused.Name, time.Since(stopped).Round(time.Millisecond), other.Name, fence)
	first.stop()

	a := s.lateBuyerBusy(t, victims[0])
	t.Logf("%s after SIGCONT: buyer answered %s; seckill_lock_lost_total %v, purchases busy %v",
		paused.Name, a.outcome(), paused.Metric("seckill_lock_lost_total", ""),
		paused.Metric("seckill_purchases_total", `outcome="busy"`))

	s.finish(t, apis...)
	s.verify(t, other, noneUnanswered)
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
