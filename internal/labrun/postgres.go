package labrun

import (
	"net"
	"time"

	"github.com/seckill/seckill/internal/procs"
)

// The postgres locks' cells (internal/lab: an advisory lock on a session the holder keeps).
// The lock has no lease: PostgreSQL keeps it for as long as the holder's session lives. So
// what frees it is what ends the session: a killed process (its kernel closes its
// connections), and, when the client stops answering without a word (a partition, a host gone),
// PostgreSQL's TCP keepalives, which find the client gone and end the session.

// PostgresSessionLoss is how long PostgreSQL keeps the session of a client that stopped
// answering, in the lab (postgresProbe): from its last packet if it was idle, else from
// the first data it left unacknowledged.
const PostgresSessionLoss = 2 * time.Second

// postgresProbe is how the lab's PostgreSQL finds a client gone: as a PostgreSQL with
// tcp_keepalives_idle = 1, tcp_keepalives_interval = 1, tcp_keepalives_count = 1 and
// tcp_user_timeout = 2000 would. A partition cell's processes reach PostgreSQL through
// forwarders, which would answer its probes themselves, so the forwarders probe in its place
// (procs.Netns.ForwardProbing; docs/lab.md, "The database as a lock", says why the user
// timeout, and what PostgreSQL's defaults would do).
var postgresProbe = procs.Probe{
	KeepAlive:   net.KeepAliveConfig{Idle: time.Second, Interval: time.Second, Count: 1},
	UserTimeout: PostgresSessionLoss,
}

// isPostgres reports whether lock is one of the postgres locks.
func isPostgres(lock string) bool { return lock == "postgres" || lock == "postgres-nofence" }

// forPostgres is s as a postgres lock's cell runs it. The lease that a scenario asks for means
// nothing to an advisory lock, so work and pauses longer than it change nothing; the partition
// must outlast PostgreSQL's finding the client gone (PostgresSessionLoss). So the partition
// cell is cut off, from PostgreSQL (the lock's session and the data alike: they are one
// server), once it has read the stock, for 4 s, twice that, as it starts 3 s of work, on one
// unit: the session's end, the next holder's work and the sale's end fit in the cell's 10 s.
func (s Scenario) forPostgres() Scenario {
	switch s.Name {
	case "long-work":
		s.What = "think_ms 600, longer than the 250 ms lease asked for, which the advisory lock does not have"
	case "pause":
		s.What = "SIGSTOP of the process holding the lock, once it has read the stock, for 1.5 s, then SIGCONT: its session, which its kernel keeps, holds the lock meanwhile"
	case "partition":
		s.Stock, s.Buyers, s.ThinkMS, s.Pause, s.Trigger = 1, 10, 3000, 2*PostgresSessionLoss, 0
		s.What = "the process holding the lock cut off from PostgreSQL (its lock's session and its reads and writes alike) once it has read the stock, as it starts think_ms 3000, for 4 s, twice the 2 s in which PostgreSQL's keepalives end the session of a client that does not answer; then healed"
	}
	return s
}
