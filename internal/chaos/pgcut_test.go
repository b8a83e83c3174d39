//go:build linux

package chaos_test

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestPostgresConnectionsCut: two API processes reach PostgreSQL through a proxy of the
// test's, which cuts every connection again and again mid-sale, as a flapping network would,
// while every strategy that writes in a transaction is on sale. A cut that lands before a
// transaction's COMMIT rolls it back (503 unavailable, nothing written). A cut that lands
// while COMMIT is in flight leaves its outcome unknown to the process, which asks PostgreSQL
// on a new connection before it answers (seckill_commits_settled_total): 201 if it committed,
// 503 if not. PostgreSQL's replies are held back a little meanwhile, so that cuts find
// COMMITs in flight; the test cuts until that has happened a few times (bounded), then checks
// that every answer matches PostgreSQL and that every sale sells out.
func TestPostgresConnectionsCut(t *testing.T) {
	log := faultTest(t)
	b, _ := sharedBackend(t)
	px, apis := b.startProxiedAPIs(t, 2, map[string]string{"LOCK_TTL": "500ms", "LOCK_WAIT": "1s", "PURCHASE_TIMEOUT": "2s"})
	var sales []*sale
	for _, strategy := range []string{"dlock", "pessimistic", "optimistic", "redis"} {
		sales = append(sales, newSale(t, apis[0], b.dsn, product{strategy: strategy, stock: 400}))
	}
	for _, s := range sales {
		s.start(3, apis...)
	}
	for _, s := range sales {
		s.waitBought(t, 5)
	}
	log("selling")

	settled := func() float64 {
		n := 0.0
		for _, p := range apis {
			n += p.Metric("seckill_commits_settled_total", "")
		}
		return n
	}
	// Replies 20ms late: each statement, COMMIT included, waits for its answer long enough
	// for cuts to land there, and a COMMIT held in the proxy has reached PostgreSQL already.
	px.SetReplyLatency(20 * time.Millisecond)
	cuts := 0
	for ; cuts < 100 && settled() < 3; cuts++ {
		px.Down()
		px.Up(t)
		// The fault's rhythm: long enough between cuts to reconnect and reach COMMIT again.
		time.Sleep(time.Duration(150+rand.IntN(200)) * time.Millisecond)
	}
	px.SetReplyLatency(0)
	log("%d cuts; COMMITs settled: %v", cuts, settled())
	for _, p := range apis {
		for _, result := range []string{"committed", "rolled_back", "unknown"} {
			t.Logf("%s: settled %s: %v", p.Name, result, p.Metric("seckill_commits_settled_total", `result="`+result+`"`))
		}
	}
	if settled() == 0 {
		t.Errorf("no cut in %d caught a COMMIT in flight: the settle path went untested", cuts)
	}
	finishAll(t, log, sales, apis)
}
