//go:build linux

package chaos_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestRedisBackOlder: the Redis server of two API processes comes back older than it was,
// mid-sale of a dlock, a redis and a queue product, everything it did since a moment in the
// sale forgotten while PostgreSQL keeps it:
//   - "rdb snapshot": a snapshot is taken (BGSAVE, as a `save` point takes it), the sale goes
//     on for a second, and Redis is killed (-9) and started from the snapshot;
//   - "aof everysec": with appendonly yes and appendfsync everysec the AOF's size is noted, the
//     sale goes on for a second, Redis is killed and its AOF cut back to the note, as a power
//     cut loses what the next fsync would have made durable (a crash of the process alone
//     loses nothing: the kernel keeps what Redis wrote).
//
// What Redis had forgotten comes back wrong, not empty: locks and fence keys older than the
// last ones, the gate's stock higher than PostgreSQL's, its buyers set without the last
// buyers, admissions pending that were settled, and the queue's stream, counter and buyers as
// they were. The service must never oversell and every answer must stay true; dlock and redis
// lose nothing; queue loses the purchases queued after the moment and not written by the
// crash (answered 202, never written), and sells the units the counter got back: each is
// counted and logged.
func TestRedisBackOlder(t *testing.T) {
	faultTest(t)
	for _, tc := range []struct {
		name  string
		extra []string
		// mark notes the moment Redis will come back to; back kills Redis and brings it back
		// to the mark, and says what it lost.
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
			apis := b.startAPIs(t, 2, map[string]string{"LOCK_TTL": "300ms", "LOCK_WAIT": "1s", "PURCHASE_TIMEOUT": "1s"})
			sales := []*sale{
				newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 200, thinkMS: 50}),
				newSale(t, apis[0], b.dsn, product{strategy: "redis", stock: 120, thinkMS: 100}),
				newSale(t, apis[0], b.dsn, product{strategy: "queue", stock: 150, thinkMS: 300}),
			}
			dlock, gated, queue := sales[0], sales[1], sales[2]
			// Redis forgets the holder's key (or brings back an older one that expires): another
			// process may be granted the lock while the holder's batch still commits, before its
			// watchdog finds the key gone. The fence keeps those writes in order (see allowTwoHolders).
			dlock.allowTwoHolders("Redis came back older: the holder's key forgotten, its batch may still commit")
			for _, s := range sales {
				s.start(4, apis...)
			}
			for _, s := range sales {
				s.waitBought(t, 10)
			}
			fence := dlock.auditPG(t).Fence
			back := tc.mark(t, red)
			marked := time.Now()
			bought := boughtOf(sales)
			time.Sleep(time.Second) // the sale goes on: what Redis will forget (the fault, not an assertion)
			rdb := red.Client()
			before := redisSides(t, rdb, b.keys(), gated, queue)
			what := back()
			after := redisSides(t, rdb, b.keys(), gated, queue)
			log("Redis %s; sold meanwhile: %v since the mark, %v in all", what, sub(boughtOf(sales), bought), boughtOf(sales))
			log("redis gate at the kill %s, after the restart %s; PostgreSQL stock %d", before[0], after[0], gated.pgStock(t))
			log("queue at the kill %s, after the restart %s; PostgreSQL stock %d", before[1], after[1], queue.pgStock(t))
			for _, s := range []*sale{gated, queue} {
				log("%s: buyers Redis forgot, retried at once: %s", s.strategy, s.retryForgotten(t, rdb, b.keys(), apis[1], marked))
			}
			for _, s := range sales {
				s.waitBought(t, s.bought.Load()+3) // the sale goes on after the restart
			}
			for _, s := range sales {
				s.finish(t, apis...)
			}
			log("all three sold out")

			t.Run("dlock", func(t *testing.T) {
				dlock.verify(t, apis[1], noneUnanswered)
				if after := dlock.auditPG(t).Fence; after <= fence {
					t.Errorf("fence after the restart %d <= before it %d", after, fence)
				}
			})
			t.Run("redis", func(t *testing.T) {
				gated.verify(t, apis[1], noneUnanswered)
				for _, p := range apis {
					t.Logf("%s: gate admissions reconciled %v", p.Name, p.Metric("seckill_gate_reconciled_total", ""))
				}
			})
			t.Run("queue", func(t *testing.T) { queue.verifyOlder(t, apis, marked) })
		})
	}
}

// verifyOlder verifies a queue sale whose Redis came back older than it was at marked: the
// purchases queued after marked and not written by the crash are lost (answered 202, never
// written), and the units the counter got back are sold again, to buyers PostgreSQL then has
// no unit for (dead-lettered sold_out: answered 202, or 409 sold_out when the word came
// within QUEUE_WAIT). Both kinds of 202 without an order may only be answers given after
// marked; every other answer must agree with PostgreSQL, and the retries too.
func (s *sale) verifyOlder(t *testing.T, apis []*apiProc, marked time.Time) {
	t.Helper()
	s.drain(t, apiClient(t, apis[1]))
	lost := s.lostAccepted(t)
	s.lostOK = map[int64]bool{}
	for _, u := range lost {
		if a, _ := s.answerOf(u); a.done.Before(marked) {
			t.Errorf("user %d was answered 202 at %v, before the moment Redis came back to, and has no order", u, a.done)
		}
		s.lostOK[u] = true
	}
	dead := 0.0
	for _, p := range apis {
		dead += p.Metric("seckill_queue_dead_lettered_total", `reason="sold_out"`)
	}
	pg := s.auditPG(t)
	t.Logf("queue: answers %s; PostgreSQL: %s", s.summary(), pg)
	t.Logf("queue: %d buyers answered 202 have no order: %v dead-lettered sold_out (the counter sold units PostgreSQL "+
		"no longer had), the others queued after the moment and lost with the stream", len(lost), dead)
	if !pg.Consistent || pg.Stock != 0 {
		t.Errorf("queue: PostgreSQL after the loss: %s", pg)
	}
	s.checkAnswers(t, pg, apiClient(t, apis[1]), noneUnanswered)
	s.checkRetries(t, pg, apis[1])
	// The service's audit is not asked to agree: the dead-letter stream holds the units sold
	// twice, and says so.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if a, err := apiClient(t, apis[1]).Audit(ctx, s.id); err == nil && a.Queue != nil {
		t.Logf("queue: the API's audit: consistent %v, %+v", a.Consistent, *a.Queue)
	}
}

// boughtOf is how many units each sale has sold (answered 201 or 202).
func boughtOf(sales []*sale) []int64 {
	n := make([]int64, len(sales))
	for i, s := range sales {
		n[i] = s.bought.Load()
	}
	return n
}

func sub(a, b []int64) []int64 {
	d := make([]int64, len(a))
	for i := range a {
		d[i] = a[i] - b[i]
	}
	return d
}

// redisSides reads what Redis holds of the redis product gated and the queue product queue.
func redisSides(t *testing.T, rdb *redis.Client, keys inventory.Keys, gated, queue *sale) [2]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	g, err := inventory.NewGate(rdb, keys).State(ctx, gated.id)
	if err != nil {
		return [2]string{err.Error(), err.Error()}
	}
	q, err := inventory.NewQueue(rdb, keys).State(ctx, queue.id)
	if err != nil {
		return [2]string{err.Error(), err.Error()}
	}
	return [2]string{
		fmt.Sprintf("{stock %d, buyers %d, pending %d}", g.Stock, g.Buyers, g.Pending),
		fmt.Sprintf("{stock %d, buyers %d, queued %d}", q.Stock, q.Buyers, q.Queued),
	}
}

// retryForgotten has up to 3 buyers who bought after marked, and whom the gate's buyers set
// no longer holds, retry their purchase through via while the sale goes on, as a client that
// lost its answer does (again after a 503, as Retry-After asks), and returns their answers.
// Each must be true: 409 already_purchased naming the order the buyer has, or 202 (queue:
// queued again, and its lookup finds the order); anything else, a 201 included (the order is
// not bought now), fails the test.
func (s *sale) retryForgotten(t *testing.T, rdb *redis.Client, keys inventory.Keys, via *apiProc, marked time.Time) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pg := s.auditPG(t)
	c := apiClient(t, via)
	n := map[string]int{}
	tried := 0
	for _, a := range s.answersSnapshot() {
		if tried >= 3 {
			break
		}
		if a.done.Before(marked) || !pg.buyers[a.user] || rdb.SIsMember(ctx, keys.GateBuyers(s.id), a.user).Val() {
			continue
		}
		tried++
		o, err := c.Purchase(ctx, s.id, a.user)
		var p *api.Problem
		var accepted *client.AcceptedError
		for waited := 0; waited < 10 && errors.As(err, &p) && p.Status == http.StatusServiceUnavailable &&
			(p.Code == api.CodeBusy || p.Code == api.CodeUnavailable); waited++ {
			// Nothing was written: a client retries after Retry-After. The API's Redis client
			// may still be failing for up to a second after the restart (go-redis redials a
			// pool whose dials all failed once a second).
			n["503 "+p.Code+", retried"]++
			time.Sleep(time.Second)
			o, err = c.Purchase(ctx, s.id, a.user)
		}
		switch {
		case errors.As(err, &accepted):
			n["202"]++
			if found, err := s.lookUpOrder(c, a.user); err != nil || !found {
				t.Errorf("%s: user %d, who has an order, retried: 202, then the lookup found %v (%v)", s.strategy, a.user, found, err)
			}
		case errors.As(err, &p) && p.Code == api.CodeAlreadyPurchased && p.OrderID == pg.orders[a.user]:
			n["409 already_purchased with its order"]++
		default:
			t.Errorf("%s: user %d has order %d; its retry after Redis forgot it: %+v, %v", s.strategy, a.user, pg.orders[a.user], o, err)
			n["untrue"]++
		}
	}
	return formatCounts(n)
}
