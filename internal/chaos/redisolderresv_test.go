//go:build linux

package chaos_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// olderStock and olderWindow are the stock and payment window of TestRedisBackOlderReturns's
// products: the window outlasts selling out and taking the snapshot on a loaded machine.
const (
	olderStock  = 10
	olderWindow = 8 * time.Second
)

// TestRedisBackOlderReturns: two API processes sell a redis and a queue product with a payment
// window on a redis-server of the test's own. Both sell out to reservations (every unit
// reserved, the gate settled), and the moment is kept: a snapshot (BGSAVE), or, with
// appendonly yes and appendfsync everysec, the AOF's size. The reservations expire: their
// units are back in PostgreSQL and in the gate. Redis is killed (-9) and started from the
// snapshot, or with its AOF cut back to the size noted, as a power cut loses what the next
// fsync would have kept: the gate says stock 0 and counts the buyers of the expired
// reservations, PostgreSQL has every unit. Then twice as many new buyers as units arrive: they
// must buy every unit (no sold_out while PostgreSQL has stock; before the fix every one was
// told sold_out and the audit stayed inconsistent), each pays at once, and every buyer buys
// once more after the sale. The sale's invariants and answers hold (violations, the history
// check, their negative controls: finishAndVerify), and the API's audit is consistent.
func TestRedisBackOlderReturns(t *testing.T) {
	faultTest(t)
	for _, tc := range []struct {
		name  string
		extra []string
		// mark keeps the moment Redis will come back to; back kills Redis, brings it back to
		// the mark and says how.
		mark func(t *testing.T, red *servers.Redis) func() string
	}{
		{"rdb snapshot", nil, func(t *testing.T, red *servers.Redis) func() string {
			red.Snapshot(t)
			return func() string {
				red.Stop()
				red.Start()
				return "started from the snapshot"
			}
		}},
		{"aof everysec", []string{"--appendonly", "yes", "--appendfsync", "everysec"}, func(t *testing.T, red *servers.Redis) func() string {
			m := red.MarkAOF(t)
			return func() string {
				red.Stop()
				cut := red.CutAOF(t, m)
				red.Start()
				return fmt.Sprintf("started with the last %d bytes of its AOF cut", cut)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := faultTest(t)
			b, red := ownRedis(t, tc.extra...)
			rdb := red.Client()
			procs := b.startAPIs(t, 2, resvEnv)
			var sales []*resvSale
			for _, st := range []string{"redis", "queue"} {
				s := newResvSale(t, b, rdb, procs, st, olderStock, olderWindow)
				s.wg.Add(1)
				go func() { defer s.wg.Done(); s.monitor() }()
				sales = append(sales, s)
			}
			eachSale(sales, func(s *resvSale) { s.buyers(1, olderStock, false) })
			for _, s := range sales {
				s.waitGate(t, "sold out to reservations, the gate settled", 0, olderStock)
			}
			back := tc.mark(t, red)
			log("both sold out to reservations; Redis's moment kept")
			for _, s := range sales {
				s.waitGate(t, "every reservation expired, its unit back in PostgreSQL and the gate", olderStock, 0)
			}
			log("Redis %s", back())
			for _, s := range sales {
				st := s.gateAfter(t)
				if !st.Seeded || st.Stock != 0 {
					t.Fatalf("%s: the gate after the restart is %+v: not the older one, sold out; the test would prove nothing", s.strategy, st)
				}
				log("%s: the gate after the restart %+v, PostgreSQL's stock %d", s.strategy, st, olderStock)
			}

			restarted := time.Now()
			eachSale(sales, func(s *resvSale) { s.buyers(olderStock+1, 3*olderStock, true) })
			log("new buyers answered, %.2fs after the restart", time.Since(restarted).Seconds())
			for _, s := range sales {
				if v := s.snapshot(t); v.stock != 0 || v.pending != 0 || v.paid != olderStock {
					t.Errorf("%s: new buyers after the restart: %s; answers: %s", s.strategy, v, s.answersSince(olderStock+1))
					continue
				}
				log("%s: new buyers after the restart bought every unit: %s", s.strategy, s.answersSince(olderStock+1))
			}
			if t.Failed() {
				t.FailNow()
			}
			finishAndVerify(t, log, procs[1], sales...)
			for _, s := range sales {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				a, err := apiClient(t, procs[1]).Audit(ctx, s.id)
				cancel()
				if err != nil || !a.Consistent {
					t.Errorf("%s: the API's audit after the sale: %+v, %v; want consistent", s.strategy, a, err)
				}
			}
			for _, p := range procs {
				for line := range strings.Lines(p.Log.String()) {
					if strings.Contains(line, `"msg":"gate verified in a new Redis data set"`) {
						t.Logf("%s: %s", p.Name, strings.TrimSpace(line))
					}
				}
			}
			noErrorsLogged(t, procs...)
		})
	}
}

// eachSale runs f for each sale at once and waits for them.
func eachSale(sales []*resvSale, f func(s *resvSale)) {
	var wg sync.WaitGroup
	for _, s := range sales {
		wg.Go(func() { f(s) })
	}
	wg.Wait()
}

// buyers has users first to last buy one unit each, all at once, each until its purchase
// is answered other than 503 (after Retry-After: 200 ms here), 20 tries at most. A buyer
// answered 201, or 202 and then its order written, pays at once if pay is set, else lets its
// reservation expire. It waits for every buyer.
func (s *resvSale) buyers(first, last int64, pay bool) {
	if pay {
		s.payPct.Store(100) // act pays at once
	}
	var wg sync.WaitGroup
	for u := first; u <= last; u++ {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(s.id), uint64(u)))
			for try := 0; try < 20; try++ {
				op, o := s.call(rng, "buy", u, false)
				switch {
				case op.status == http.StatusServiceUnavailable || op.status == 0:
					time.Sleep(200 * time.Millisecond)
					continue
				case op.status == http.StatusAccepted:
					var ok bool
					if o, ok = s.awaitWritten(rng, u, 0); !ok {
						return
					}
				case op.status != http.StatusCreated:
					return
				}
				if pay {
					s.act(rng, o)
				}
				return
			}
		})
	}
	wg.Wait()
}

// waitGate waits (30 s at most) until PostgreSQL has stock units left and pending
// reservations, and the gate agrees with it (for queue: nothing queued). A read that fails
// (the shared PostgreSQL out of connection slots a moment) is tried again.
func (s *resvSale) waitGate(t *testing.T, what string, stock, pending int64) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, s.strategy+": "+what, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		a, err := s.audit.Sale(ctx, s.id, true)
		agrees := err == nil && (a.Gate != nil && a.Gate.Agrees || a.Queue != nil && a.Queue.Agrees)
		var n int64
		err = s.db.QueryRowContext(ctx, `SELECT count(*) FROM orders WHERE product_id = $1 AND status = 'pending'`, s.id).Scan(&n)
		return agrees && err == nil && a.Stock == stock && n == pending
	})
}

// gateAfter reads the gate of the sale through its Redis client, trying again for 10 s while
// the client's connections to the killed server fail.
func (s *resvSale) gateAfter(t *testing.T) inventory.QueueState {
	t.Helper()
	var st inventory.QueueState
	var err error
	testenv.Eventually(t, 10*time.Second, s.strategy+": the gate read after the restart", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		st, err = inventory.NewQueue(s.rdb, s.b.keys()).State(ctx, s.id)
		return err == nil
	})
	return st
}

// answersSince counts the answers to the purchases of users from first on.
func (s *resvSale) answersSince(first int64) string {
	n := map[string]int{}
	for _, op := range s.opsSnapshot() {
		if op.kind == "buy" && op.user >= first {
			n[op.outcome()]++
		}
	}
	return formatCounts(n)
}
