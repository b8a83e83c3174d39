// Package labrun runs the oversell lab's matrix (docs/lab.md): every lab lock (internal/lab)
// in every scenario, each cell a fresh product sold to many more buyers than its stock by
// three real API processes, with the scenario's real fault (kill -9 or SIGSTOP of the
// process that holds the lock, or that process cut off from the lock's server by a silent
// network partition), audited from PostgreSQL and judged against the result written down
// for it here. cmd/loadtest lab is its command line.
package labrun

import "time"

// Verdicts of a cell.
const (
	Safe     = "safe"     // sold out, one unit per order
	Oversold = "oversold" // more orders than the stock accounts for
	Stalled  = "stalled"  // stopped selling with stock left
	// Unfinished: still selling, nothing lost, when the cell's time ran out. It is never
	// expected: the cell proved nothing.
	Unfinished = "unfinished"
)

// Scenario is a condition that brings a lock's flaw out.
type Scenario struct {
	Name string
	// What is done, for the report.
	What string
	// Product and crowd: stock, buyers (distinct users), think_ms and lease_ms.
	Stock, Buyers, ThinkMS, LeaseMS int
	// Fault, if any: "kill" (SIGKILL) or "pause" (SIGSTOP for Pause, then SIGCONT, once it has
	// read the stock) of the process that holds the product's lock, once Trigger orders are
	// in; "partition" (that
	// process cut off from the lock's server, not from PostgreSQL, for Pause, then healed); or
	// "failover": the cell runs on a Redis Sentinel deployment of its own whose replica never
	// gets the lock, and its master is killed while a process holds the lock (see failover.go).
	Fault   string
	Pause   time.Duration
	Trigger int
	// Timeout bounds how long the cell's buyers keep trying; 0: cellTimeout.
	Timeout time.Duration
}

// Scenarios are the lab's, in the matrix's order. The etcd lock's cells run them with a
// lease etcd grants, and longer work and pause to outlast it (see forEtcd).
var Scenarios = []Scenario{
	{Name: "crowd", What: "three API processes, many more buyers than stock, think_ms 10",
		Stock: 20, Buyers: 200, ThinkMS: 10, LeaseMS: 2000},
	{Name: "long-work", What: "think_ms 600, longer than the lock's 250 ms lease",
		Stock: 6, Buyers: 60, ThinkMS: 600, LeaseMS: 250},
	{Name: "crash", What: "kill -9 of the process holding the lock, mid-sale (setnx-expire: between SETNX and EXPIRE)",
		Stock: 20, Buyers: 200, ThinkMS: 50, LeaseMS: 1000, Fault: "kill", Trigger: 5},
	{Name: "pause", What: "SIGSTOP of the process holding the lock, once it has read the stock, for 1.5 s, three times its 500 ms lease, then SIGCONT",
		Stock: 20, Buyers: 200, ThinkMS: 250, LeaseMS: 500, Fault: "pause", Pause: 1500 * time.Millisecond, Trigger: 3},
	{Name: "failover", What: "the Redis master killed while a process holds the lock, and its replica, which never got the lock, promoted by Redis Sentinel; think_ms 7000 outlasts the failover; the 30 s lease outlasts the work, and the watchdogs renew it every 10 s",
		Stock: 1, Buyers: 30, ThinkMS: 7000, LeaseMS: 30000, Fault: "failover", Timeout: 25 * time.Second},
	{Name: "partition", What: "the process holding the lock cut off from Redis (etcd, for the etcd lock), not from PostgreSQL, as it starts think_ms 1500, for 700 ms, longer than its 500 ms lease; then healed",
		Stock: 4, Buyers: 40, ThinkMS: 1500, LeaseMS: 500, Fault: "partition", Pause: 700 * time.Millisecond, Trigger: 1},
}

// Locks are the lab's locks, in the matrix's order: internal/lab's Names, which the lab build
// of the API takes (TestLocksAreTheLabs keeps the two lists one), named here so that the runner
// links none of the locks.
var Locks = []string{"none", "mutex", "setnx", "setnx-expire", "del", "lease", "watchdog", "fence", "dlock", "redsync", "redislock", "etcd",
	"postgres-nofence", "postgres", "zookeeper-nofence", "zookeeper"}

// Expected is the result written down for every cell: lock -> scenario -> verdict. A cell
// that differs fails the lab, a safe lock that oversold as much as a broken lock whose flaw
// did not show. docs/lab.md explains each.
var Expected = map[string]map[string]string{
	"none":         {"crowd": Oversold, "long-work": Oversold, "crash": Oversold, "pause": Oversold, "failover": Oversold, "partition": Oversold},
	"mutex":        {"crowd": Oversold, "long-work": Oversold, "crash": Oversold, "pause": Oversold, "failover": Oversold, "partition": Oversold},
	"setnx":        {"crowd": Safe, "long-work": Safe, "crash": Stalled, "pause": Safe, "failover": Oversold, "partition": Safe},
	"setnx-expire": {"crowd": Safe, "long-work": Oversold, "crash": Stalled, "pause": Oversold, "failover": Oversold, "partition": Oversold},
	"del":          {"crowd": Safe, "long-work": Oversold, "crash": Safe, "pause": Oversold, "failover": Oversold, "partition": Oversold},
	"lease":        {"crowd": Safe, "long-work": Oversold, "crash": Safe, "pause": Oversold, "failover": Oversold, "partition": Oversold},
	"watchdog":     {"crowd": Safe, "long-work": Safe, "crash": Safe, "pause": Oversold, "failover": Oversold, "partition": Oversold},
	"fence":        {"crowd": Safe, "long-work": Safe, "crash": Safe, "pause": Safe, "failover": Safe, "partition": Safe},
	"dlock":        {"crowd": Safe, "long-work": Safe, "crash": Safe, "pause": Safe, "failover": Safe, "partition": Safe},
	"redsync":      {"crowd": Safe, "long-work": Oversold, "crash": Safe, "pause": Oversold, "failover": Oversold, "partition": Oversold},
	"redislock":    {"crowd": Safe, "long-work": Oversold, "crash": Safe, "pause": Oversold, "failover": Oversold, "partition": Oversold},
	"etcd":         {"crowd": Safe, "long-work": Safe, "crash": Safe, "pause": Safe, "failover": Safe, "partition": Safe},
	// The advisory lock lives as long as its session: a killed holder's ends with its process,
	// a paused holder's lives on (the sale waits), a cut-off holder's ends once PostgreSQL
	// finds its client gone, while the holder works on.
	"postgres-nofence": {"crowd": Safe, "long-work": Safe, "crash": Safe, "pause": Safe, "failover": Safe, "partition": Oversold},
	"postgres":         {"crowd": Safe, "long-work": Safe, "crash": Safe, "pause": Safe, "failover": Safe, "partition": Safe},
	// A ZooKeeper session expires on the ensemble's clock, as an etcd lease: a paused or
	// cut-off holder loses its node while it works on; only the fence stops its write. The
	// leader's death loses nothing (failover).
	"zookeeper-nofence": {"crowd": Safe, "long-work": Safe, "crash": Safe, "pause": Oversold, "failover": Safe, "partition": Oversold},
	"zookeeper":         {"crowd": Safe, "long-work": Safe, "crash": Safe, "pause": Safe, "failover": Safe, "partition": Safe},
}

// Short is the matrix that `make test` runs: each lock's defining flaw once (those shown only
// in the partition column: ShortPartition), the fence alone under a pause (what saves it is
// PostgreSQL's check), the advisory lock under a pause (its session outlives it), ZooKeeper's
// lock with its fence under a pause and its leader's death, and dlock in every scenario but
// partition. Pairs are lock, scenario.
var Short = [][2]string{
	{"none", "crowd"}, {"mutex", "crowd"}, {"dlock", "crowd"},
	{"del", "long-work"}, {"lease", "long-work"}, {"redsync", "long-work"}, {"redislock", "long-work"},
	{"dlock", "long-work"},
	{"setnx", "crash"}, {"setnx-expire", "crash"}, {"dlock", "crash"},
	{"watchdog", "pause"}, {"fence", "pause"}, {"dlock", "pause"}, {"postgres-nofence", "pause"},
	{"zookeeper-nofence", "pause"}, {"zookeeper", "pause"},
	{"lease", "failover"}, {"dlock", "failover"}, {"zookeeper", "failover"},
}

// ShortPartition is the locks whose partition cells `make test` runs (TestPartitionCells),
// apart from Short, whose processes run without network namespaces: the unfenced watchdog,
// setnx, dlock, etcd, and the advisory lock without and with its fence.
var ShortPartition = []string{"watchdog", "setnx", "dlock", "etcd", "postgres-nofence", "postgres"}

// timeout is how long the scenario's buyers keep trying.
func (s Scenario) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return cellTimeout
}

// scenario returns the scenario named name.
func scenario(name string) (Scenario, bool) {
	for _, s := range Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// EtcdMinLease is the shortest lease etcd grants: its server raises a shorter TTL to 1.5
// election timeouts in whole seconds (2 s with the default election timeout of 1 s), and
// internal/etcdlock rounds a lease up to whole seconds besides.
const EtcdMinLease = 2 * time.Second

// cellScenario returns the scenario as cell p runs it: p's scenario, adjusted for the etcd
// lock (see forEtcd), the postgres locks (forPostgres) and the zookeeper locks
// (forZooKeeper); false if there is no such scenario.
func cellScenario(p Pair) (Scenario, bool) {
	s, ok := scenario(p.Scenario)
	switch {
	case ok && p.Lock == "etcd":
		s = s.forEtcd()
	case ok && isPostgres(p.Lock):
		s = s.forPostgres()
	case ok && isZooKeeper(p.Lock):
		s = s.forZooKeeper()
	}
	return s, ok
}

// forEtcd is s as the etcd lock's cell runs it. A lease shorter than EtcdMinLease would be
// raised by etcd anyway, so the cell asks for that one, and what the scenario means to
// outlast the lease outlasts it: long work thinks 3 s (2 units, so that the sale ends within
// the cell's 10 s), longer than the lease even counting the 0.5 s etcd may take to revoke an
// expired one; the pause lasts 4 s, two leases, after think_ms 100.
func (s Scenario) forEtcd() Scenario {
	if s.LeaseMS >= int(EtcdMinLease/time.Millisecond) {
		return s
	}
	s.LeaseMS = int(EtcdMinLease / time.Millisecond)
	switch s.Name {
	case "long-work":
		s.Stock, s.Buyers, s.ThinkMS = 2, 20, 3000
		s.What = "think_ms 3000, longer than the lock's 2 s lease (etcd's shortest)"
	case "pause":
		s.ThinkMS, s.Pause = 100, 2*EtcdMinLease // 20 units' work and the pause fit in the cell
		s.What = "SIGSTOP of the process holding the lock, once it has read the stock, for 4 s, twice its 2 s lease (etcd's shortest), then SIGCONT"
	case "partition":
		// One unit, its first holder cut off: the lease's run-out, the next holder's work and
		// the sale's end fit in the cell's 10 s.
		s.Stock, s.Buyers, s.ThinkMS, s.Pause, s.Trigger = 1, 10, 3000, 2*EtcdMinLease, 0
		s.What = "the process holding the lock cut off from etcd, not from PostgreSQL, for 4 s, twice its 2 s lease (etcd's shortest), as it starts think_ms 3000; then healed"
	}
	return s
}
