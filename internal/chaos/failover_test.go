//go:build linux

package chaos_test

import (
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestPostgresSwitchoverThenKill: two API processes sell on a Patroni cluster of the test's
// own (a primary and its synchronous standby), reached by the multi-host URL
// (target_session_attrs=read-write). Mid-sale, a planned switchover (Patroni's REST API) makes
// the standby the primary; once the old primary is back as its synchronous standby, the new
// primary's WAL senders are paused until COMMITs wait for the standby (written on the
// primary, their buyers without an answer) and the primary is killed: Patroni and PostgreSQL
// at once (kill -9 of its PID namespace). The standby is promoted once the leader key
// expires (ttl 10 s), and the processes find it by themselves. A COMMIT in flight is settled
// truthfully against the new primary, which never got it: 503 unavailable or outcome_unknown,
// never 201. Every invariant of the chaos tests then holds on the new primary (verify,
// finishAndVerify): no acknowledged order lost, 201 ⇔ an order, no duplicate, no oversell,
// the retry rule, every history linearizable, no 500. Measured per sale for each fault: how
// long purchases were refused, the time to the first sale after it, and the longest stretch
// without an order written, which must be shorter around the switchover than around the kill.
func TestPostgresSwitchoverThenKill(t *testing.T) {
	log := faultTest(t)
	c, b, rdb := onPatroni(t, servers.PatroniOptions{})
	apis := b.startAPIs(t, 2, failoverEnv)
	fs := startFailoverSales(t, b, rdb, apis, failoverCells(t, failoverCell{strategy: "dlock"}))
	first, second := c.Primary(), c.Standby()
	log("selling on %s (primary) and %s (synchronous standby)", first.Name, second.Name)

	onset := time.Now()
	c.Switchover(second)
	log("switched over to %s", second.Name)
	planned := fs.outages(t, onset)
	logOutages(t, "planned switchover", planned)
	c.WaitReplicating(90 * time.Second)
	log("%s streams from %s as its synchronous standby", first.Name, second.Name)
	fs.sellsAgain(t, time.Now(), 3)

	inFlight := commitsInFlight(t, second, 1)
	onset = time.Now()
	second.Kill()
	log("%s killed with %d COMMITs waiting for the standby", second.Name, inFlight)
	if promoted := c.WaitPrimary(60*time.Second, second); promoted != first {
		t.Fatalf("%s promoted, want the synchronous standby %s", promoted.Name, first.Name)
	}
	log("%s promoted", first.Name)
	unplanned := fs.outages(t, onset)
	logOutages(t, "kill -9 of the primary", unplanned)
	// Compared: the longest stretch without an order written, which the queue strategy has
	// too, though it refuses nothing (it answers 202 while its writes wait).
	for i, o := range planned {
		if k := unplanned[i]; o.unwritten >= k.unwritten {
			t.Errorf("%s: %v without an order written around the switchover, %v around the kill: a planned switchover should cost less",
				o.name, o.unwritten.Round(10*time.Millisecond), k.unwritten.Round(10*time.Millisecond))
		}
	}
	logSettled(t, apis)
	fs.finish(t, log, apis)
	noErrorsLogged(t, apis...)
}

// logSettled logs how each process settled the COMMITs that got no answer.
func logSettled(t *testing.T, apis []*apiProc) {
	t.Helper()
	for _, p := range apis {
		t.Logf("%s: COMMITs settled: committed %v, rolled back %v, unknown %v", p.Name,
			p.Metric("seckill_commits_settled_total", `result="committed"`),
			p.Metric("seckill_commits_settled_total", `result="rolled_back"`),
			p.Metric("seckill_commits_settled_total", `result="unknown"`))
	}
}
