//go:build linux

package chaos_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/history"
)

// controlLease is how long a process may sell on its copy of a product after a pause, when
// the announcement does not reach it (docs/api.md#merchants-controls).
const controlLease = time.Second

// TestPauseResumeMidSale: two API processes sell a dlock, a redis and a queue product; each is
// paused through one process mid-sale, left paused 2 s, and resumed. Purchases already past
// the check finish (nothing in flight is lost: verify's 201 ⇔ an order); no request sent
// later than the lease after the pause's answer is answered 201 or 202 before the resume;
// both processes answer sale_paused meanwhile; the sales sell out afterwards with every
// invariant and history check.
func TestPauseResumeMidSale(t *testing.T) {
	log := faultTest(t)
	b, _ := sharedBackend(t)
	apis := b.startAPIs(t, 2, map[string]string{"LOCK_TTL": "1s", "QUEUE_CLAIM_IDLE": "1s"})
	var sales []*sale
	for _, strategy := range []string{"dlock", "redis", "queue"} {
		s := newSale(t, apis[0], b.dsn, product{strategy: strategy, stock: 60, thinkMS: 20})
		s.refusals = map[string]bool{api.CodeSalePaused: true}
		sales = append(sales, s)
		s.start(4, apis...)
	}
	admin := apiClient(t, apis[0])
	ctx := context.Background()
	paused := map[*sale]time.Time{}
	for _, s := range sales {
		s.waitBought(t, 10)
		if _, err := admin.Pause(ctx, s.id); err != nil {
			t.Fatalf("%s: pause: %v", s.strategy, err)
		}
		paused[s] = time.Now()
	}
	log("paused all three mid-sale")
	time.Sleep(2 * time.Second)
	resumed := map[*sale]time.Time{}
	for _, s := range sales {
		resumed[s] = time.Now()
		if _, err := admin.Resume(ctx, s.id); err != nil {
			t.Fatalf("%s: resume: %v", s.strategy, err)
		}
	}
	log("resumed")
	for _, s := range sales {
		s.finish(t, apis...)
	}
	for _, s := range sales {
		t.Run(s.strategy, func(t *testing.T) {
			refused := map[string]int{}
			for _, a := range s.answersSnapshot() {
				inPause := a.sent.After(paused[s].Add(controlLease)) && a.done.Before(resumed[s])
				switch {
				case a.code == api.CodeSalePaused:
					refused[a.target]++
					if a.retryAfter == "" {
						t.Errorf("user %d: sale_paused without Retry-After", a.user)
					}
					if a.sent.After(resumed[s].Add(controlLease)) {
						t.Errorf("user %d was answered sale_paused by %s for a request sent %v after the resume",
							a.user, a.target, a.sent.Sub(resumed[s]).Round(time.Millisecond))
					}
				case inPause && (a.status == http.StatusCreated || a.status == http.StatusAccepted):
					t.Errorf("user %d was answered %d by %s for a request sent %v after the pause was answered",
						a.user, a.status, a.target, a.sent.Sub(paused[s]).Round(time.Millisecond))
				}
			}
			log("%s: sale_paused answers by process %v", s.strategy, refused)
			for _, p := range apis {
				if refused[p.Name] == 0 {
					t.Errorf("%s answered no sale_paused while the sale was paused", p.Name)
				}
			}
			s.verify(t, apis[1], noneUnanswered)
		})
	}
}

// TestRestockRacingLastUnits: two API processes sell a dlock, a redis and a queue product of
// 30 units; once 28 are sold (or all of them, when the last units go first), a restock of 20 is sent three times at once with one key, through
// both processes, racing the last units (and the sold-out mark, when they win). Every answer is
// the same restock; the product sells exactly 50; every invariant holds, and the history checks
// against the stock model with the restock placed between its first request and its last answer.
func TestRestockRacingLastUnits(t *testing.T) {
	log := faultTest(t)
	b, _ := sharedBackend(t)
	apis := b.startAPIs(t, 2, map[string]string{"LOCK_TTL": "1s", "QUEUE_CLAIM_IDLE": "1s"})
	const stock, units = 30, 20
	var sales []*sale
	for _, strategy := range []string{"dlock", "redis", "queue"} {
		s := newSale(t, apis[0], b.dsn, product{strategy: strategy, stock: stock, thinkMS: 10})
		sales = append(sales, s)
		s.start(4, apis...)
	}
	var wg sync.WaitGroup
	for _, s := range sales {
		wg.Go(func() { restockRacing(t, log, s, apis, units) })
	}
	wg.Wait()
	for _, s := range sales {
		s.finish(t, apis...)
	}
	for _, s := range sales {
		t.Run(s.strategy, func(t *testing.T) {
			if pg := s.auditPG(t); pg.InitialStock != stock+units || pg.Orders != stock+units {
				t.Errorf("%s: PostgreSQL: %s; want %d units and orders", s.strategy, pg, stock+units)
			}
			s.verify(t, apis[1], noneUnanswered)
			// The control: the same history without the restock is refused (50 units taken of 30).
			control := saleOf(s, s.auditPG(t))
			control.Restocks = nil
			if res, err := checkPurchases(t, s.purchases(everyAnswer), control, "-without-restock"); err != nil || res.Verdict != history.Illegal {
				t.Errorf("%s: the history without its restock: %s (%v), want illegal", s.strategy, res, err)
			}
		})
	}
}

// restockRacing waits until s has two units left or fewer, then restocks units three times at
// once with one key, through apis in turn, checks that every answer is the same restock and
// records it for the history.
func restockRacing(t *testing.T, log func(string, ...any), s *sale, apis []*apiProc, units int) {
	deadline := time.Now().Add(30 * time.Second)
	for s.bought.Load() < int64(s.stock-2) && !s.soldOut.Load() {
		if time.Now().After(deadline) {
			t.Errorf("%s: %d of %d units sold after 30 s", s.strategy, s.bought.Load(), s.stock)
			return
		}
		time.Sleep(time.Millisecond)
	}
	first := time.Now()
	answers := make([]api.Restock, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			answers[i], errs[i] = apiClient(t, apis[i%len(apis)]).Restock(context.Background(), s.id, "racing-the-last-units", units)
		})
	}
	wg.Wait()
	last := time.Now()
	for i, err := range errs {
		if err != nil || answers[i] != answers[0] {
			t.Errorf("%s: restock attempt %d = %+v, %v; want the first one's %+v", s.strategy, i, answers[i], err, answers[0])
			return
		}
	}
	s.mu.Lock()
	s.restocks = append(s.restocks, history.Restock{Product: s.id, Units: units, Invoke: first, Complete: last})
	s.mu.Unlock()
	log("%s: restocked %d units with %d sold, sold out: %v (three attempts, one key)", s.strategy, units, s.bought.Load(), s.soldOut.Load())
}
