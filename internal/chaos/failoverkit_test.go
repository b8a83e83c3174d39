//go:build linux

package chaos_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// The PostgreSQL failover tests (failover_*_test.go) sell on a Patroni cluster of their own
// (servers.StartPatroni: a primary and its synchronous standby) that API processes reach by
// its multi-host URL (target_session_attrs=read-write), and break its primary mid-sale.

// failoverMatrixEnv names the variable that runs every cell under each fault: every strategy
// that sells through PostgreSQL, with and without a payment window. Without it each fault
// runs one cell (make test).
const failoverMatrixEnv = "SECKILL_PG_FAILOVER_MATRIX"

// failoverCell is one sale of a failover test: a strategy, with a payment window or not.
type failoverCell struct {
	strategy string
	window   bool // a reservation sale (resvSale, pay_within_ms resvWindow)
}

func (c failoverCell) String() string {
	if c.window {
		return c.strategy + "+window"
	}
	return c.strategy
}

// failoverCells is every cell when failoverMatrixEnv is 1, else only one.
func failoverCells(t *testing.T, one failoverCell) []failoverCell {
	t.Helper()
	switch os.Getenv(failoverMatrixEnv) {
	case "", "0":
		return []failoverCell{one}
	case "1":
	default:
		t.Fatalf("%s=%q: want 1 or nothing", failoverMatrixEnv, os.Getenv(failoverMatrixEnv))
	}
	var cells []failoverCell
	for _, window := range []bool{false, true} {
		for _, s := range []string{"dlock", "redis", "queue", "pessimistic", "optimistic"} {
			cells = append(cells, failoverCell{s, window})
		}
	}
	return cells
}

// failoverEnv is the API processes' environment: the reservation tests' (resvEnv), which
// plain sales run with too.
var failoverEnv = resvEnv

// onPatroni starts a Patroni cluster of the test's own with opt and returns it with a
// backend on it (its multi-host URL, a key prefix on the shared Redis) and a client of that
// Redis.
func onPatroni(t *testing.T, opt servers.PatroniOptions) (*servers.Patroni, backend, *redis.Client) {
	t.Helper()
	c := servers.StartPatroni(t, opt)
	b, rdb := sharedRedisBackend(t, c.DSN())
	return c, b, rdb
}

// failoverSales is one fault's sales: a plain sale (sale) or a reservation sale (resvSale)
// per cell, all on the same processes.
type failoverSales struct {
	plain []*sale
	resv  []*resvSale
}

// startFailoverSales puts a product of each cell on sale through procs and starts its buyers,
// and waits until each has sold a few units.
func startFailoverSales(t *testing.T, b backend, rdb redis.UniversalClient, procs []*apiProc, cells []failoverCell) *failoverSales {
	t.Helper()
	fs := &failoverSales{}
	// Stock enough that no sale sells out before the faults are over: a switchover, the old
	// primary's rejoin, a kill (TestPostgresSwitchoverThenKill: about 30 s of selling; a
	// dlock sale alone sold 400 units in less). Sales side by side sell each more slowly.
	stock := 1200
	if len(cells) > 1 {
		stock = 400
	}
	for _, c := range cells {
		if c.window {
			fs.resv = append(fs.resv, newResvSale(t, b, rdb, procs, c.strategy, 40, resvWindow))
			continue
		}
		fs.plain = append(fs.plain, newSale(t, procs[0], b.dsn, product{strategy: c.strategy, stock: stock, thinkMS: 20}))
	}
	for _, s := range fs.plain {
		// Patient: a purchase whose COMMIT went to a primary that fell silent is answered
		// within PURCHASE_TIMEOUT + order.AfterDeadline (13 s), later than requestTimeout.
		s.launchWith(2, false, patient, procs)
	}
	for _, s := range fs.resv {
		s.timeout = patient
		s.start(3, 3*int(s.initial))
	}
	fs.sellsAgain(t, time.Now().Add(-time.Minute), 3)
	return fs
}

// sellsAgain waits (60 s at most) until every sale has n purchases sent from since on
// answered 201: orders written.
func (fs *failoverSales) sellsAgain(t *testing.T, since time.Time, n int) {
	t.Helper()
	for _, s := range fs.plain {
		if s.soldOut.Load() {
			t.Fatalf("%s sold out before the faults were over: raise its stock", s.strategy)
		}
	}
	for _, m := range fs.attempts() {
		testenv.Eventually(t, 60*time.Second, m.name+" selling", func() bool {
			sold := 0
			for _, a := range m.get() {
				if a.written && !a.sent.Before(since) {
					sold++
				}
			}
			time.Sleep(20 * time.Millisecond)
			return sold >= n
		})
	}
}

// finish sells every sale out after the fault and verifies each (verify, finishAndVerify):
// no acknowledged order lost (201 ⇔ an order in PostgreSQL, now the new primary), no
// duplicate, no oversell, the retry rule, every history linearizable. via is the process the
// checks go through.
func (fs *failoverSales) finish(t *testing.T, log func(string, ...any), procs []*apiProc) {
	t.Helper()
	for _, s := range fs.plain {
		s.finish(t, procs...)
	}
	if len(fs.plain) > 0 {
		log("plain sales sold out")
	}
	for _, s := range fs.plain {
		t.Run(s.strategy, func(t *testing.T) { s.verify(t, procs[len(procs)-1], noneUnanswered) })
	}
	if len(fs.resv) > 0 {
		finishAndVerify(t, log, procs[len(procs)-1], fs.resv...)
	}
}

// syncRepWaiters counts the sessions of the node at dsn whose COMMIT waits for the
// synchronous standby (wait_event SyncRep), -1 when it cannot tell.
func syncRepWaiters(db *sql.DB) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'`).Scan(&n); err != nil {
		return -1
	}
	return n
}

// commitsInFlight pauses p's WAL senders (servers.PatroniNode.PauseWALSenders) until at
// least n COMMITs wait for the standby on p, and returns how many do: the primary has
// written them, and no client has its answer. It fails the test after 20 s.
func commitsInFlight(t *testing.T, p *servers.PatroniNode, n int) int {
	t.Helper()
	db, err := sql.Open("pgx", p.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p.PauseWALSenders()
	var waiting int
	testenv.Eventually(t, 20*time.Second, fmt.Sprintf("%d COMMITs waiting for the standby on %s", n, p.Name), func() bool {
		waiting = syncRepWaiters(db)
		time.Sleep(5 * time.Millisecond)
		return waiting >= n
	})
	return waiting
}
