//go:build linux

package chaos_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/audit"
	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

const (
	requestTimeout = 10 * time.Second // one purchase, client side
	saleTimeout    = 90 * time.Second // everything one sale does, faults included
	maxUsers       = 20000            // bounds the requests of one sale
)

// product is what a test puts on sale.
type product struct {
	strategy string
	stock    int
	thinkMS  int
	fair     bool // dlock only: a fair lock (docs/dlock.md)
	// startsAt, if set, is the sale's start (docs/api.md#the-sale-window): a buyer answered
	// sale_not_started waits for it, as Retry-After tells, and checkAnswers holds every answer to it.
	startsAt *time.Time
}

// answer is what one buyer (a distinct user id) got from one purchase request.
type answer struct {
	user       int64
	target     string // the API process asked
	status     int    // 0: no HTTP answer (refused, cut, timed out)
	code       string // the problem's code, if any
	order      int64  // the order a 201 or already_purchased named
	retryAfter string
	lb         bool // the load balancer's own problem (its detail begins lbDetail), not the API's
	err        error
	sent, done time.Time
}

// outcome names the answer the way the summary counts it.
func (a answer) outcome() string {
	switch {
	case a.status == 0:
		return "no answer"
	case a.code == "":
		return strconv.Itoa(a.status)
	case a.lb:
		return fmt.Sprintf("%d %s (load balancer)", a.status, a.code)
	}
	return fmt.Sprintf("%d %s", a.status, a.code)
}

// outcomeUnavailable is the outcome of a 503 unavailable answer, as counts names it.
var outcomeUnavailable = answer{status: http.StatusServiceUnavailable, code: api.CodeUnavailable}.outcome()

// sale is one product on sale and every answer its buyers got. Buyers run in groups of
// workers, each group on a fixed list of API processes, so a test can move the load around.
type sale struct {
	product
	id       int64
	db       *sql.DB        // direct PostgreSQL: the source of truth for the audit
	audit    *audit.Auditor // of db, PostgreSQL only
	ctx      context.Context
	t        testing.TB // of newSale: the buyers' exchanges are checked against the API's description
	nextUser atomic.Int64
	soldOut  atomic.Bool // a buyer was answered sold_out
	bought   atomic.Int64

	mu       sync.Mutex
	answers  []answer
	inflight map[int64]string // user -> API process, requests not answered yet
	groups   []*group
	// lostOK are buyers answered 202 whose purchase a test knows Redis lost (no persistence):
	// verify allows them no order, and holds every other answer to PostgreSQL.
	lostOK map[int64]bool
	// retries are the answers to checkRetries' purchases, after the sale, one per attempt.
	retries []answer
	// refusals are the codes besides sold_out a new buyer may be answered (none by default):
	// a test of the merchant's controls allows sale_paused, for one.
	refusals map[string]bool
	// restocks are the merchant's restocks during the sale, for the history (saleOf).
	restocks []history.Restock
}

// newSale creates the product through via and opens PostgreSQL at dsn for the audit.
func newSale(t *testing.T, via *apiProc, dsn string, p product) *sale {
	t.Helper()
	gdb, err := db.Open(dsn, db.PoolOptions{MaxOpen: 2})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := gdb.DB()
	t.Cleanup(func() { sqlDB.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), saleTimeout)
	s := &sale{product: p, db: sqlDB, audit: audit.New(sqlDB, nil, inventory.Keys{}), ctx: ctx, t: t, inflight: map[int64]string{}}
	t.Cleanup(func() { cancel(); s.stopAll() })
	created, err := apiClient(t, via).CreateProduct(ctx, api.NewProduct{
		Name: "chaos " + p.strategy, Stock: new(p.stock), Strategy: p.strategy, ThinkMS: p.thinkMS, Fair: p.fair,
		StartsAt: p.startsAt,
	})
	if err != nil || created.ID == 0 {
		t.Fatalf("create product = %+v, %v", created, err)
	}
	s.id = created.ID
	return s
}

// waitBought waits until at least n units are sold (answered 201) by the whole sale.
func (s *sale) waitBought(t *testing.T, n int64) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, fmt.Sprintf("%d units of the %s product sold", n, s.strategy), func() bool {
		if s.soldOut.Load() {
			t.Fatalf("%s product sold out before the fault: raise its stock", s.strategy)
		}
		return s.bought.Load() >= n
	})
}

// inflightUsers returns the users whose requests to the named process are unanswered.
func (s *sale) inflightUsers(target string) []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var users []int64
	for u, to := range s.inflight {
		if to == target {
			users = append(users, u)
		}
	}
	slices.Sort(users)
	return users
}

// answerOf returns the answer user got, if any.
func (s *sale) answerOf(user int64) (answer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.answers {
		if a.user == user {
			return a, true
		}
	}
	return answer{}, false
}

// answersSnapshot returns a copy of the answers so far.
func (s *sale) answersSnapshot() []answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.answers)
}

// slowest returns the longest time a request sent since start took to be answered.
func (s *sale) slowest(start time.Time) time.Duration {
	var d time.Duration
	for _, a := range s.answersSnapshot() {
		if !a.sent.Before(start) {
			d = max(d, a.done.Sub(a.sent))
		}
	}
	return d.Round(time.Millisecond)
}

// stopAll stops every group, waiting for their answers.
func (s *sale) stopAll() {
	s.mu.Lock()
	groups := slices.Clone(s.groups)
	s.mu.Unlock()
	for _, g := range groups {
		g.stop()
	}
}

// finish stops the load of the fault phase, then buys through targets with new users until
// PostgreSQL shows the product sold out: the sale must finish once the fault is gone.
func (s *sale) finish(t *testing.T, targets ...*apiProc) {
	t.Helper()
	s.stopAll()
	deadline := time.Now().Add(30 * time.Second)
	for {
		stock := s.pgStock(t)
		if stock == 0 {
			return
		}
		if time.Now().After(deadline) || s.ctx.Err() != nil {
			t.Fatalf("%s sale did not finish after the fault: PostgreSQL stock %d, answers %s", s.strategy, stock, s.summary())
		}
		s.soldOut.Store(false)
		s.start(4, targets...).wg.Wait()
		time.Sleep(50 * time.Millisecond)
	}
}

// pgStock is the product's stock in PostgreSQL.
func (s *sale) pgStock(t *testing.T) int64 {
	t.Helper()
	return s.auditPG(t).Stock
}

// counts tallies the answers by outcome.
func (s *sale) counts() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := map[string]int{}
	for _, a := range s.answers {
		n[a.outcome()]++
	}
	return n
}

// summary is the answers by outcome, e.g. "201×60, 409 sold_out×4, 503 busy×12".
func (s *sale) summary() string { return formatCounts(s.counts()) }

func formatCounts(n map[string]int) string {
	if len(n) == 0 {
		return "none"
	}
	var b bytes.Buffer
	for i, k := range slices.Sorted(maps.Keys(n)) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s×%d", k, n[k])
	}
	return b.String()
}
