//go:build linux

package chaos_test

import (
	"context"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// TestGracefulShutdown: an API process gets SIGTERM while purchases are in flight on it —
// one batch holding the product's lock inside its critical section, others queued behind
// it. Every one of them completes with a real answer (201 or 409), the process exits 0
// within SHUTDOWN_TIMEOUT, and afterwards no lock key of the product is left in Redis (held
// locks were released, not left to expire: LOCK_TTL is 10s here, so a leaked lock would
// still be there). Another process then finishes the sale.
func TestGracefulShutdown(t *testing.T) {
	log := faultTest(t)
	b, rdb := sharedBackend(t)
	apis := b.startAPIs(t, 2, map[string]string{"LOCK_TTL": "10s", "LOCK_WAIT": "5s", "SHUTDOWN_TIMEOUT": "5s"})
	leaving, staying := apis[0], apis[1]
	s := newSale(t, staying, b.dsn, product{strategy: "dlock", stock: 24, thinkMS: 300})
	ctx, key := context.Background(), b.keys().Lock(s.id)

	g := s.startFresh(5, leaving) // a new connection per request: accepted or refused, never lost
	s.waitBought(t, 3)
	testenv.Eventually(t, 10*time.Second, "purchases in flight and the lock held", func() bool {
		return len(s.inflightUsers(leaving.Name)) >= 3 && rdb.Exists(ctx, key).Val() == 1
	})
	g.halt()
	testenv.Eventually(t, 10*time.Second, "the requests in flight fully sent", func() bool { return g.unwritten.Load() == 0 })
	// A request the kernel took but the server had not accepted yet when its listener closed
	// is reset: that is not an in-flight purchase. Give the server time to accept them all.
	time.Sleep(100 * time.Millisecond)
	inflight := s.inflightUsers(leaving.Name)
	leaving.Signal(syscall.SIGTERM)
	sigterm := time.Now()
	log("SIGTERM with %d purchases in flight (users %v) and the lock held", len(inflight), inflight)
	if !leaving.Wait(5*time.Second + 5*time.Second) {
		t.Fatalf("%s still running 10s after SIGTERM (SHUTDOWN_TIMEOUT 5s)", leaving.Name)
	}
	log("%s exited: %v", leaving.Name, leaving.Err())
	if leaving.Err() != nil {
		t.Errorf("%s exited with %v (code %d) after SIGTERM, want 0", leaving.Name, leaving.Err(), exitCode(leaving.Err()))
	}
	if n := rdb.Exists(ctx, key).Val(); n != 0 {
		ttl := rdb.PTTL(ctx, key).Val()
		t.Errorf("lock key %s still exists (ttl %v) after %s exited: a held lock was not released", key, ttl, leaving.Name)
	}
	g.stop()
	if len(inflight) == 0 {
		t.Fatalf("no purchase in flight at SIGTERM: the test proved nothing")
	}
	for _, u := range inflight {
		a, ok := s.answerOf(u)
		switch {
		case !ok:
			t.Errorf("user %d in flight at SIGTERM has no answer", u)
		case a.status != http.StatusCreated && a.status != http.StatusConflict:
			t.Errorf("user %d in flight at SIGTERM (sent %v before it) answered %s (%v), want 201 or 409",
				u, sigterm.Sub(a.sent).Round(time.Millisecond), a.outcome(), a.err)
		}
	}

	s.finish(t, staying)
	log("sold out through %s", staying.Name)
	s.verify(t, staying, noneUnanswered)
}
