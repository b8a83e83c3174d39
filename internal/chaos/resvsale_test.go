//go:build linux

package chaos_test

import (
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/audit"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/contract"
)

// resvOp is one request of a reservation sale's buyer: a purchase ("buy"), a payment or a
// cancel, and its answer.
type resvOp struct {
	kind        string // buy, pay, cancel, retry (a buy after the sale: resvSale.retryAll)
	user        int64
	target      string // the API process asked
	status      int    // 0: no HTTP answer
	code        string // the problem's code, if any
	order       int64  // the order the answer named (its body, or the problem's order_id)
	orderStatus string // the status of the order in a 2xx body
	retryAfter  string
	err         error
	sent, done  time.Time
	atDeadline  bool // a payment or cancel sent around the reservation's pay_by
}

func (o resvOp) outcome() string {
	s := o.kind + " " + strconv.Itoa(o.status)
	if o.code != "" {
		s += " " + o.code
	}
	return s
}

// resvSale is one product with a payment window on sale, over real HTTP to several API
// processes, to buyers who each, once they won a reservation, pay at once, pay around its
// pay_by (racing the sweepers), cancel at once, cancel around its pay_by, or walk away (the
// sweeper expires it), and whose reservation ended buy again. A monitor samples PostgreSQL
// meanwhile: stock + pending + paid == initial_stock, and pending + paid <= initial_stock,
// in every snapshot.
type resvSale struct {
	t        *testing.T
	strategy string
	id       int64
	initial  int64
	window   time.Duration
	db       *sql.DB
	audit    *audit.Auditor // PostgreSQL and the gate, directly
	watch    *testenv.Watch // the monitor's samples of the product (sample)
	rdb      redis.UniversalClient
	b        backend
	clients  map[string]*client.Client
	timeout  time.Duration // one request, client side; 0: requestTimeout

	mu    sync.Mutex
	procs []*apiProc
	down  map[string]bool // processes buyers no longer ask (killed)
	quiet map[string]bool // processes whose requests may go unanswered
	// frozen is when each process was frozen (SIGSTOP to SIGCONT): a request in flight then
	// may have its connection cut (see violations).
	frozen map[string][2]time.Time
	ops    []resvOp

	// payPct is the percentage of winners who pay (half at once, half around pay_by); 100:
	// every winner pays at once (finish).
	payPct   atomic.Int32
	stopping atomic.Bool
	wg       sync.WaitGroup
	// what the monitor saw
	samples, sampleErrs, maxHeld atomic.Int64
	monitorBad                   []string // under mu
}

// newResvSale creates a product of strategy with stock units and a payment window through
// procs[0], and opens PostgreSQL at b.dsn and Redis (rdb) for the audit.
func newResvSale(t *testing.T, b backend, rdb redis.UniversalClient, procs []*apiProc, strategy string, stock int, window time.Duration) *resvSale {
	t.Helper()
	gdb, err := db.Open(b.dsn, db.PoolOptions{MaxOpen: 3})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := gdb.DB()
	t.Cleanup(func() { sqlDB.Close() })
	s := &resvSale{t: t, strategy: strategy, initial: int64(stock), window: window, db: sqlDB, rdb: rdb, b: b,
		audit: audit.New(sqlDB, rdb, b.keys()), procs: procs, down: map[string]bool{}, quiet: map[string]bool{},
		frozen:  map[string][2]time.Time{},
		clients: map[string]*client.Client{}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := apiClient(t, procs[0]).CreateProduct(ctx, api.NewProduct{Name: "chaos reservations " + strategy,
		Stock: new(stock), Strategy: strategy, PayWithinMS: int(window.Milliseconds())})
	if err != nil || p.ID == 0 {
		t.Fatalf("create product = %+v, %v", p, err)
	}
	s.id = p.ID
	s.watch = testenv.NewWatch(sqlDB, p.ID)
	s.payPct.Store(8)
	tr := &http.Transport{MaxIdleConnsPerHost: 32}
	hc := &http.Client{Transport: contract.Transport(t, tr)}
	for _, p := range procs {
		s.clients[p.Name] = client.New(p.Base, &client.Options{HTTPClient: hc})
	}
	t.Cleanup(func() { s.stop(); tr.CloseIdleConnections() })
	return s
}

// start runs workers buyers, each cycling through users of its own (users in all), until
// stop, and the monitor.
func (s *resvSale) start(workers, users int) {
	s.wg.Add(workers + 1)
	go func() { defer s.wg.Done(); s.monitor() }()
	for w := range workers {
		var mine []int64
		for u := w + 1; u <= users; u += workers {
			mine = append(mine, int64(u))
		}
		go func() { defer s.wg.Done(); s.buyer(rand.New(rand.NewPCG(uint64(s.id), uint64(w))), mine) }()
	}
}

// stop stops the buyers, lets the reservations they hold play out, and stops the monitor.
func (s *resvSale) stop() {
	if s.stopping.CompareAndSwap(false, true) {
		s.wg.Wait()
	}
}

// kill marks p down (buyers stop asking it) and its requests as ones that may go unanswered;
// the caller kills it.
func (s *resvSale) kill(p *apiProc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.down[p.Name], s.quiet[p.Name] = true, true
}

// froze records that p was frozen from stopped until resumed.
func (s *resvSale) froze(p *apiProc, stopped, resumed time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.frozen[p.Name] = [2]time.Time{stopped, resumed}
}

// pick returns a process buyers may ask, at random.
func (s *resvSale) pick(rng *rand.Rand) *apiProc {
	s.mu.Lock()
	defer s.mu.Unlock()
	up := slices.DeleteFunc(slices.Clone(s.procs), func(p *apiProc) bool { return s.down[p.Name] })
	return up[rng.IntN(len(up))]
}

// call sends one request of kind for user to a process picked at random and records it.
func (s *resvSale) call(rng *rand.Rand, kind string, user int64, atDeadline bool) (resvOp, api.Order) {
	p := s.pick(rng)
	c := s.clients[p.Name]
	op := resvOp{kind: kind, user: user, target: p.Name, sent: time.Now(), atDeadline: atDeadline}
	timeout := requestTimeout
	if s.timeout > 0 {
		timeout = s.timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var o api.Order
	var err error
	switch kind {
	case "buy", "retry":
		o, err = c.Purchase(ctx, s.id, user)
	case "pay":
		o, err = c.Pay(ctx, s.id, user)
	case "cancel":
		o, err = c.Cancel(ctx, s.id, user)
	}
	var problem *api.Problem
	var accepted *client.AcceptedError
	switch {
	case err == nil:
		op.status, op.order, op.orderStatus = http.StatusOK, o.ID, o.Status
		if kind == "buy" || kind == "retry" {
			op.status = http.StatusCreated
		}
	case errors.As(err, &accepted):
		op.status = http.StatusAccepted
	case errors.As(err, &problem):
		op.status, op.code, op.order, op.retryAfter = problem.Status, problem.Code, problem.OrderID, problem.RetryAfter
	default:
		op.err = err
	}
	op.done = time.Now()
	s.mu.Lock()
	s.ops = append(s.ops, op)
	s.mu.Unlock()
	return op, o
}

// buyer buys for its users in turn until the sale stops; each reservation won is acted on
// (act) before the next user's turn. A user who paid tries again now and then: it must be
// told already_purchased.
func (s *resvSale) buyer(rng *rand.Rand, users []int64) {
	paid := map[int64]bool{}
	last := map[int64]int64{} // user -> the last order it acted on
	for i := 0; !s.stopping.Load(); i++ {
		u := users[i%len(users)]
		if paid[u] && rng.IntN(8) > 0 {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		op, o := s.call(rng, "buy", u, false)
		var ok bool
		switch {
		case op.status == http.StatusCreated:
			ok = true
		case op.status == http.StatusAccepted: // queue: written soon
			o, ok = s.awaitWritten(rng, u, last[u])
		case op.code == api.CodeAlreadyPurchased && !paid[u] && op.order != last[u]:
			// A reservation of an earlier request whose answer was lost: act on it.
			o, ok = s.awaitWritten(rng, u, last[u])
		default:
			time.Sleep(time.Duration(10+rng.IntN(30)) * time.Millisecond)
		}
		if ok && o.Status == api.StatusPending {
			last[u] = o.ID
			paid[u] = s.act(rng, o)
		} else if ok && o.Status == api.StatusPaid {
			last[u], paid[u] = o.ID, true
		}
	}
}

// awaitWritten waits (10 s at most) for user's live order other than prev to show in the
// lookup, and returns it; false if it ended before it showed, or never did.
func (s *resvSale) awaitWritten(rng *rand.Rand, user, prev int64) (api.Order, bool) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		p := s.pick(rng)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		o, err := s.clients[p.Name].OrderOf(ctx, s.id, user)
		cancel()
		switch {
		case err != nil || o.ID == prev:
		case o.Status == api.StatusPending || o.Status == api.StatusPaid:
			return o, true
		default:
			return api.Order{}, false // written, and ended before it showed
		}
	}
	return api.Order{}, false
}

// act does what the buyer of reservation o does with it, and reports whether it paid it:
// payPct/2 % pay at once (payPct is 8 until finish), payPct/2 % pay around its pay_by, 15%
// cancel at once, 15% cancel around its pay_by (sent from 100 ms before it to 20 ms after, on
// the local clock, so that some land before pay_by, racing the sweepers, and some after: the
// figures say how many of each), the others walk away; once payPct is 100, every buyer pays
// at once.
func (s *resvSale) act(rng *rand.Rand, o api.Order) bool {
	r, pay := rng.IntN(100), int(s.payPct.Load())
	kind, late := "pay", false
	switch {
	case pay >= 100, r < pay/2:
	case r < pay:
		late = true
	case r < pay+15:
		kind = "cancel"
	case r < pay+30:
		kind, late = "cancel", true
	default:
		return false
	}
	if late && o.PayBy != nil {
		time.Sleep(time.Until(o.PayBy.Add(time.Duration(rng.IntN(120)-100) * time.Millisecond)))
	}
	// A request that got no answer, or a 503, is asked again (another process, maybe): both
	// routes are idempotent.
	for attempt := 0; attempt < 4; attempt++ {
		op, got := s.call(rng, kind, o.UserID, late)
		if op.status != 0 && op.status != http.StatusServiceUnavailable {
			return op.status == http.StatusOK && got.Status == api.StatusPaid
		}
		time.Sleep(50 * time.Millisecond)
	}
	return false
}

// opsSnapshot returns a copy of the requests so far.
func (s *resvSale) opsSnapshot() []resvOp {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ops)
}
