//go:build linux

package chaos_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestPostgresRestart: the PostgreSQL server of two API processes (a cluster of the test's
// own) is shut down mid-sale the way `pg_ctl restart -m fast` does it — every session is
// terminated, open transactions roll back — and started again once buyers have been
// answered 503 unavailable. Nothing is half-written (each order and its decrement commit
// together or not at all), no request is answered 500, and both sales finish afterwards.
func TestPostgresRestart(t *testing.T) {
	skipShort(t)
	t.Parallel()
	log := timeline(t)
	_, prefix := testenv.Redis(t)
	pg := servers.StartPostgres(t)
	log("PostgreSQL cluster up")
	b := backend{dsn: pg.DSN(), redis: testenv.RedisAddr(t), prefix: prefix}
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
	waitFor(t, 20*time.Second, "buyers answered 503 unavailable while PostgreSQL is down", func() bool {
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
	for _, s := range sales {
		s.finish(t, apis...)
	}
	log("sold out")
	for _, s := range sales {
		t.Run(s.strategy, func(t *testing.T) { s.verify(t, apis[1], noneUnanswered) })
	}
	for _, p := range apis {
		if lines := p.ErrorLines(); len(lines) > 0 {
			t.Errorf("%s logged %d errors (each a 500 or worse), first: %s", p.Name, len(lines), lines[0])
		}
		if n := strings.Count(p.Log.String(), `"msg":"dependency unavailable"`); n > 0 {
			t.Logf("%s logged %d 'dependency unavailable' warnings (the 503s)", p.Name, n)
		}
	}
}
