//go:build linux

package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/contract"
)

// bundleBuyers buy bundles (one unit of each of ids, all or nothing: POST
// /api/v1/bundles/purchase) through one API process, each a new user, until halted.
type bundleBuyers struct {
	c    *client.Client
	name string // the process's
	ids  []int64
	next atomic.Int64
	halt atomic.Bool
	wg   sync.WaitGroup

	mu       sync.Mutex
	answers  map[int64]answer
	inflight map[int64]bool
}

// buyBundles starts workers buyers of bundles of ids through p, with user ids from first on.
func buyBundles(t *testing.T, p *apiProc, workers int, first int64, ids ...int64) *bundleBuyers {
	hc := &http.Client{Transport: contract.Transport(t, &http.Transport{MaxIdleConnsPerHost: workers})}
	b := &bundleBuyers{c: client.New(p.Base, &client.Options{HTTPClient: hc}), name: p.Name, ids: ids,
		answers: map[int64]answer{}, inflight: map[int64]bool{}}
	b.next.Store(first - 1)
	for range workers {
		b.wg.Go(func() {
			for !b.halt.Load() {
				if a := b.buy(); a.status != http.StatusCreated {
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
	t.Cleanup(b.stop)
	return b
}

func (b *bundleBuyers) buy() answer {
	a := answer{user: b.next.Add(1), target: b.name, sent: time.Now()}
	b.mu.Lock()
	b.inflight[a.user] = true
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), patient) // a frozen process's buyers wait for its answer
	defer cancel()
	_, err := b.c.PurchaseBundle(ctx, a.user, b.ids...)
	var p *api.Problem
	switch {
	case err == nil:
		a.status = http.StatusCreated
	case errors.As(err, &p):
		a.status, a.code = p.Status, p.Code
	default:
		a.err = err
	}
	a.done = time.Now()
	b.mu.Lock()
	delete(b.inflight, a.user)
	b.answers[a.user] = a
	b.mu.Unlock()
	return a
}

// stop halts the buyers and waits for the answers of their requests in flight.
func (b *bundleBuyers) stop() {
	b.halt.Store(true)
	b.wg.Wait()
}

// inflightUsers returns the buyers waiting for an answer.
func (b *bundleBuyers) inflightUsers() []int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var users []int64
	for u := range b.inflight {
		users = append(users, u)
	}
	return users
}

// check holds every bundle answer to PostgreSQL: a bundle is all or nothing (each user has an
// order of every product of the bundle or of none), 201 has them all, an error answer none
// (an outcome_unknown and a request left unanswered may have either), and no 5xx but 503
// busy, unavailable or outcome_unknown. It returns the answers by outcome.
func (b *bundleBuyers) check(t *testing.T, s *sale) map[string]int {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	counts := map[string]int{}
	bad := 0
	fail := func(format string, args ...any) {
		if bad++; bad <= 8 {
			t.Errorf("bundle: "+format, args...)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(b.ids)), ","), "[]")
	ids = "{" + ids + "}" // a PostgreSQL array
	for u, a := range b.answers {
		counts[a.outcome()]++
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM orders WHERE user_id = $1 AND product_id = ANY($2)`,
			u, ids).Scan(&n); err != nil {
			t.Fatalf("count the orders of bundle buyer %d: %v", u, err)
		}
		maybe := a.status == 0 || a.code == api.CodeOutcomeUnknown
		switch {
		case n != 0 && n != len(b.ids):
			fail("user %d has %d orders of the %d products of the bundle, answered %s", u, n, len(b.ids), a.outcome())
		case a.status == http.StatusCreated && n == 0:
			fail("user %d was answered 201 and has no order", u)
		case a.status != http.StatusCreated && !maybe && n != 0:
			fail("user %d was answered %s and has the bundle's orders", u, a.outcome())
		case a.status >= 500 && (a.status != http.StatusServiceUnavailable ||
			a.code != api.CodeBusy && a.code != api.CodeUnavailable && a.code != api.CodeOutcomeUnknown):
			fail("user %d answered %s: a 5xx other than 503 busy/unavailable/outcome_unknown", u, a.outcome())
		}
	}
	if bad > 8 {
		t.Errorf("bundle: ... %d untrue answers in all", bad)
	}
	return counts
}

// bundleTx starts the victim (its PostgreSQL replies held back 300 ms a chunk: each statement
// of a bundle's transaction then takes that long, and its session waits idle in the
// transaction in between) and the other process, puts two dlock products on sale, has the
// other process's buyers buy the first one alone (the sale) and the victim's buyers buy
// bundles of both, and waits until a bundle of the victim's is inside its transaction with
// the first product's row locked (its decrement run less than 150 ms ago, its answer still held
// back, so COMMIT cannot have been sent). It returns the
// processes, the sale, the bundle buyers and the fence log.
func bundleTx(t *testing.T, env map[string]string) (victim, other *apiProc, s *sale, bundles *bundleBuyers, fences *fenceLog) {
	t.Helper()
	victim, other, s, fences, apps := leaderTx(t, env)
	second, err := apiClient(t, other).CreateProduct(context.Background(), api.NewProduct{Name: "bundled", Stock: new(1000)})
	if err != nil {
		t.Fatal(err)
	}
	// The other process sells, then pauses while the victim's bundles are caught: selling
	// all along, it sold the product out before the catch in 10 of 12 runs on an idle machine,
	// and a bundle that found no stock (its UPDATE matched no row) was caught instead, with
	// nothing after it to free. It starts again right after the catch, so that its batches
	// queue behind the bundle's row lock when the fault strikes.
	g := s.start(2, other)
	s.waitBought(t, 4)
	g.stop()
	bundles = buyBundles(t, victim, 2, 1_000_000, s.id, second.ID)
	testenv.Eventually(t, 20*time.Second, "a bundle of the victim inside its transaction, the first product's row locked", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var n int
		err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1
			AND state = 'idle in transaction' AND query LIKE 'UPDATE products%' AND query LIKE '%products.fence <%'
			AND clock_timestamp() - state_change < interval '150 milliseconds'`, apps.of(victim.Name)).Scan(&n)
		return err == nil && n > 0
	})
	s.start(2, other)
	return victim, other, s, bundles, fences
}

// TestBundleKilledMidTransaction: a process is killed (SIGKILL) while a bundle purchase of
// its own is inside its transaction, the first product's order inserted and its row
// decremented, the second not yet, COMMIT not sent. PostgreSQL rolls it back: no buyer has
// half a bundle, the product row is freed, and the other process sells out the first product.
func TestBundleKilledMidTransaction(t *testing.T) {
	log := faultTest(t)
	victim, other, s, bundles, fences := bundleTx(t, map[string]string{"LOCK_TTL": "500ms", "LOCK_WAIT": "2s"})
	inflight := bundles.inflightUsers()
	killed := time.Now()
	victim.Kill()
	bundles.stop()
	log("killed %s inside a bundle's transaction; its bundle buyers in flight: %v", victim.Name, inflight)
	testenv.Eventually(t, 20*time.Second, other.Name+" sells after the kill", func() bool {
		return len(writesBetween(fences.writes(t, s.id), killed, time.Now())) >= 2
	})
	log("bundle answers: %s", formatCounts(bundles.check(t, s)))
	s.finish(t, other)
	s.verify(t, other, unansweredBy(victim))
	fences.checkIncreasing(t, s.id)
}

// TestBundlePausedMidTransaction: a process is frozen (SIGSTOP) for 6 s while a bundle
// purchase of its own is inside its transaction (as in TestBundleKilledMidTransaction), past
// its lease (LOCK_TTL 300ms) and its deadline (PURCHASE_TIMEOUT 2s). Its transaction holds
// the first product's row; the other process's batches of that product take the lock once
// the lease runs out and wait in PostgreSQL for the row. PostgreSQL ends the bundle's
// session once it has waited on its client for PURCHASE_TIMEOUT + 1s (the transaction's idle
// limit), so the other process sells again while the victim is still frozen; on SIGCONT the
// bundle is answered 503 with nothing written.
func TestBundlePausedMidTransaction(t *testing.T) {
	log := faultTest(t)
	victim, other, s, bundles, fences := bundleTx(t, map[string]string{"LOCK_TTL": "300ms", "LOCK_WAIT": "1s", "PURCHASE_TIMEOUT": "2s"})
	victim.Signal(syscall.SIGSTOP)
	stopped := time.Now()
	frozen := bundles.inflightUsers()
	log("froze %s inside a bundle's transaction; its bundle buyers in flight: %v", victim.Name, frozen)
	time.Sleep(6 * time.Second) // the fault
	ws := fences.writes(t, s.id)
	sold := writesBetween(ws, stopped, time.Now())
	victim.Signal(syscall.SIGCONT)
	if len(sold) == 0 {
		gap, _ := longestGap(ws, stopped, time.Now())
		t.Fatalf("after 6 s frozen inside a bundle's transaction, nothing was sold for %v: a frozen bundle stops the sale of its products everywhere",
			gap.Round(time.Millisecond))
	}
	log("%s sold again %v after the freeze (%d writes while the victim was frozen)", other.Name,
		sold[0].at.Sub(stopped).Round(time.Millisecond), len(sold))
	testenv.Eventually(t, 20*time.Second, "the frozen bundles answered after SIGCONT", func() bool {
		return !anyIn(bundles.inflightUsers(), frozen)
	})
	bundles.stop()
	for _, u := range frozen {
		log("frozen bundle buyer %d answered %s", u, bundles.answers[u].outcome())
	}
	log("bundle answers: %s", formatCounts(bundles.check(t, s)))
	s.finish(t, other)
	s.verify(t, other, noneUnanswered)
	fences.checkIncreasing(t, s.id)
	noErrorsLogged(t, victim, other)
}
