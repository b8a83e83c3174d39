//go:build linux

package chaos_test

import (
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
)

// TestPostgresRestart: the PostgreSQL server of two API processes (a cluster of the test's
// own) is shut down mid-sale the way `pg_ctl restart -m fast` does it — every session is
// terminated, open transactions roll back — and started again once buyers have been
// answered 503 unavailable. Nothing is half-written (each order and its decrement commit
// together or not at all), no request is answered 500, and both sales finish afterwards.
func TestPostgresRestart(t *testing.T) {
	log := faultTest(t)
	b, _, pg := ownPostgres(t)
	log("PostgreSQL cluster up")
	apis := b.startAPIs(t, 2, map[string]string{"LOCK_TTL": "500ms", "LOCK_WAIT": "1s"})
	sales := []*sale{
		newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 60, thinkMS: 20}),
		newSale(t, apis[0], b.dsn, product{strategy: "pessimistic", stock: 60, thinkMS: 20}),
	}
	log("APIs up")
	for _, s := range sales {
		s.start(4, apis...)
	}
	for _, s := range sales {
		s.waitBought(t, 10)
	}

	log("sale under way: %d + %d sold", sales[0].bought.Load(), sales[1].bought.Load())
	pg.StopFast()
	log("PostgreSQL stopped (fast)")
	testenv.Eventually(t, 20*time.Second, "buyers answered 503 unavailable while PostgreSQL is down", func() bool {
		for _, s := range sales {
			if s.counts()[outcomeUnavailable] < 3 {
				return false
			}
		}
		return true
	})
	log("buyers answered 503 unavailable")
	pg.Start()
	log("PostgreSQL started again")
	for _, s := range sales {
		s.waitBought(t, s.bought.Load()+3) // the sale goes on after the restart
	}
	log("selling again")
	finishAll(t, log, sales, apis)
	noErrorsLogged(t, apis...)
}
