//go:build linux

package chaos_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
)

// TestOpeningAPIKilledAtT0: three API processes, a dlock, a redis and a queue product whose
// sale starts 3 s after their creation (docs/api.md#the-sale-window). The crowd arrives before
// the start, is answered sale_not_started, and comes back at the instant Retry-After names;
// one process is killed (SIGKILL) at that instant, with the opening burst in flight. The two
// others sell out, and each sale holds every invariant of verify: nothing answered 201 before
// the start, no sale_not_started for a request sent after it, every 201 an order, every retry
// true, the history linearizable. Only the killed process's requests may go unanswered.
func TestOpeningAPIKilledAtT0(t *testing.T) {
	log := faultTest(t)
	b, _ := sharedBackend(t)
	apis := b.startAPIs(t, 3, map[string]string{"LOCK_TTL": "500ms", "PURCHASE_TIMEOUT": "2s", "QUEUE_CLAIM_IDLE": "1s"})
	victim, rest := apis[0], apis[1:]
	startsAt := time.Now().Add(3 * time.Second).Truncate(time.Millisecond)
	var sales []*sale
	for _, strategy := range []string{"dlock", "redis", "queue"} {
		sales = append(sales, newSale(t, rest[0], b.dsn, product{strategy: strategy, stock: 40, thinkMS: 20, startsAt: &startsAt}))
	}
	for _, s := range sales {
		s.start(6, apis...) // before the start: each buyer is told to come back at it
	}
	time.Sleep(time.Until(startsAt))
	victim.Kill()
	log("killed %s at the start (%s late)", victim.Name, time.Since(startsAt).Round(time.Millisecond))
	for _, s := range sales {
		s.finish(t, rest...)
	}
	log("sold out")
	for _, s := range sales {
		t.Run(s.strategy, func(t *testing.T) {
			first, early := firstSale(s)
			log("%s: %d told sale_not_started; the first 201 answered %v after the start", s.strategy, early, first.Sub(startsAt).Round(time.Millisecond))
			if early == 0 {
				t.Errorf("%s: no buyer came before the start: the test tested no opening", s.strategy)
			}
			s.verify(t, rest[0], unansweredBy(victim))
		})
	}
}

// firstSale returns when s's first 201 was answered, and how many buyers were told
// sale_not_started.
func firstSale(s *sale) (first time.Time, early int) {
	for _, a := range s.answersSnapshot() {
		switch {
		case a.status == http.StatusCreated && (first.IsZero() || a.done.Before(first)):
			first = a.done
		case a.status == http.StatusConflict && a.code == api.CodeSaleNotStarted:
			early++
		}
	}
	return first, early
}
