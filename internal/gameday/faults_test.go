//go:build linux

package gameday_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// strategies are every strategy a game day sells with.
var strategies = []string{"dlock", "redis", "queue", "pessimistic", "optimistic"}

// expectation is an alert a fault must raise, at the webhook within its time of the fault.
type expectation struct {
	Alert  string
	Within time.Duration
}

// fault is one entry of the schedule: what breaks, for how long, and what on-call must see.
type fault struct {
	Name  string   // short, for the table
	Title string   // what happens, for the page
	Cells []string // the strategies sold through it in the full schedule
	One   string   // the one strategy of the default run (make test)
	// Expect are the alerts that must arrive; Allow those that may (the consequences a fault
	// has on every rate: 5xx, unavailability, the burn rate). Any other is unexpected.
	Expect []expectation
	Allow  []string
	// QueueLoss: the fault makes Redis forget purchases it queued (a 202 never written), as
	// docs/failures.md says a Redis that loses writes does to the queue strategy.
	QueueLoss bool
	// inject breaks the deployment and returns a note on it; heal repairs it (after Hold),
	// waits until it is whole again, and returns a note.
	Hold   time.Duration
	inject func(t *testing.T, d *deployment) string
	heal   func(t *testing.T, d *deployment) string
}

// outcomeAlerts are the alerts of answers refused or unknown: any fault that refuses
// purchases for a few seconds raises some of them, at the scaled rules' short windows.
var outcomeAlerts = []string{"SeckillUnavailable", "SeckillHTTP5xx", "SeckillLB5xx", "SeckillErrorBudgetBurn",
	"SeckillLatencyBudgetBurn", "SeckillPurchaseP99OverTarget", "SeckillOutcomeUnknown", "SeckillBusyHigh"}

// pgAlerts are what a PostgreSQL that hangs or fails over may raise besides: a COMMIT whose
// outcome the process could not learn, the self-audit's reads failing.
var pgAlerts = []string{"SeckillSettleUnknown", "SeckillSelfAuditFailing"}

// redisLossAlerts are extra and what a Redis that loses writes may raise besides: a lock
// lost, and the queue's loss as docs/failures.md tells it (purchases dead-lettered, and the
// service's audit inconsistent: the dead-letter stream holds units sold twice).
func redisLossAlerts(extra ...string) []string {
	return append([]string{"SeckillLockLost", "SeckillDeadLetters", "SeckillInconsistent"}, extra...)
}

func allow(extra ...string) []string {
	return append(append([]string(nil), outcomeAlerts...), extra...)
}

// schedule is the game day's faults, in order: those of the processes first, then Redis's,
// then PostgreSQL's, the slowest to heal.
func schedule() []*fault {
	var killedPrimary, cutNode *servers.PatroniNode
	return []*fault{{
		Name: "api-killed", Title: "one API process killed (SIGKILL), restarted 8 s later",
		Cells: strategies, One: "dlock", Hold: 8 * time.Second,
		Expect: []expectation{{"SeckillReplicaDown", 15 * time.Second}},
		Allow:  allow("SeckillTooFewReplicas"),
		inject: func(t *testing.T, d *deployment) string { d.apis[0].Kill(); return d.apis[0].Name + " killed" },
		heal: func(t *testing.T, d *deployment) string {
			d.apis[0].Restart()
			d.apis[0].WaitReady("/readyz")
			return d.apis[0].Name + " ready again"
		},
	}, {
		Name: "api-cut-from-pg", Title: "one API process cut off from PostgreSQL (its packets dropped, silently) for 15 s",
		Cells: strategies, One: "pessimistic", Hold: 15 * time.Second,
		Expect: []expectation{{"SeckillBackendDown", 15 * time.Second}},
		Allow:  allow(pgAlerts...),
		inject: func(t *testing.T, d *deployment) string {
			for _, l := range d.pgLinks {
				l.Stall()
			}
			return d.apis[2].Name + "'s connections to PostgreSQL stalled"
		},
		heal: func(t *testing.T, d *deployment) string {
			for _, l := range d.pgLinks {
				l.Up(t)
			}
			return "its connections flow again"
		},
	}, {
		// HAProxy's process replaced as its systemd unit does it (master-worker, SIGUSR2): the
		// new worker takes over the listening sockets, the old one finishes its requests. A
		// stop and a start instead lost an answer in the first full run: a connection the
		// kernel had queued for the old listener, reset when it closed (docs/failures.md).
		Name: "lb-restarted", Title: "HAProxy restarted in place (systemctl reload: a new process takes over its sockets, the old one finishes its requests)",
		Cells: strategies, One: "optimistic",
		Allow: allow("SeckillLBDown"),
		inject: func(t *testing.T, d *deployment) string {
			return fmt.Sprintf("HAProxy's new worker serving %v after the signal", d.lb.Reload().Round(time.Millisecond))
		},
	}, {
		// Redis back within a second, older: no alert is due (the sentinels saw a reboot, not a
		// failure), and every answer must still be true.
		Name: "redis-older", Title: "the Redis master restarted from a snapshot 2 s old (kill -9, then its RDB loaded)",
		Cells: []string{"dlock", "redis", "queue"}, One: "redis", QueueLoss: true,
		Allow: allow(redisLossAlerts("SeckillBackendDown", "SeckillRateLimiterFailOpen")...),
		inject: func(t *testing.T, d *deployment) string {
			m := d.redis.Master
			m.Snapshot(t)
			time.Sleep(2 * time.Second) // the sale goes on: what Redis will forget
			m.Stop()
			m.Start()
			return "master " + m.Addr + " back from its snapshot"
		},
	}, {
		Name: "redis-master-killed", Title: "the Redis master killed (kill -9): Sentinel promotes the replica; the old master rejoins as its replica",
		Cells: []string{"dlock", "redis", "queue", "pessimistic"}, One: "queue", QueueLoss: true, Hold: 2 * time.Second,
		// Redis is gone for the 2-3 s the sentinels take, about SeckillBackendDown's `for:`
		// here (30 s in production, where it would not fire): the limiter's fail-open is what
		// tells on-call, at once.
		Expect: []expectation{{"SeckillRateLimiterFailOpen", 10 * time.Second}},
		Allow:  allow(redisLossAlerts("SeckillBackendDown")...),
		inject: func(t *testing.T, d *deployment) string {
			from := d.redis.Master.Addr
			d.redis.Master.Stop()
			killed := time.Now()
			to := d.redis.AwaitFailover(t, from, 30*time.Second)
			return fmt.Sprintf("master %s killed; the sentinels named %s %v later", from, to, time.Since(killed).Round(100*time.Millisecond))
		},
		heal: func(t *testing.T, d *deployment) string {
			d.redis.Master.Start()
			return "the old master started again (the sentinels make it a replica)"
		},
	}, {
		Name: "pg-primary-killed", Title: "the PostgreSQL primary killed (kill -9, every process of the node): Patroni promotes the synchronous standby",
		Cells: strategies, One: "pessimistic", Hold: 2 * time.Second,
		Expect: []expectation{{"SeckillBackendDown", 25 * time.Second}},
		Allow:  allow(pgAlerts...),
		inject: func(t *testing.T, d *deployment) string {
			killedPrimary = d.pg.Primary()
			killedPrimary.Kill()
			killed := time.Now()
			p := d.pg.WaitPrimary(60*time.Second, killedPrimary)
			return fmt.Sprintf("%s killed; %s primary %v later", killedPrimary.Name, p.Name, time.Since(killed).Round(100*time.Millisecond))
		},
		heal: func(t *testing.T, d *deployment) string {
			killedPrimary.Start()
			d.pg.WaitReplicating(90 * time.Second)
			return killedPrimary.Name + " back as the synchronous standby"
		},
	}, {
		Name: "pg-primary-partitioned", Title: "the PostgreSQL primary cut off from everything (its namespace's packets dropped) for 25 s",
		Cells: strategies, One: "optimistic", Hold: 25 * time.Second,
		Expect: []expectation{{"SeckillBackendDown", 30 * time.Second}},
		Allow:  allow(pgAlerts...),
		inject: func(t *testing.T, d *deployment) string {
			cutNode = d.pg.Primary()
			cutNode.Isolate()
			cut := time.Now()
			p := d.pg.WaitPrimary(60*time.Second, cutNode)
			return fmt.Sprintf("%s isolated; %s primary %v later", cutNode.Name, p.Name, time.Since(cut).Round(100*time.Millisecond))
		},
		heal: func(t *testing.T, d *deployment) string {
			cutNode.Rejoin()
			d.pg.WaitReplicating(90 * time.Second)
			return cutNode.Name + " rejoined as the synchronous standby"
		},
	}}
}
