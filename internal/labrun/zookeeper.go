package labrun

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/procs"
)

// The zookeeper locks' cells (internal/lab on internal/zklock). A run with such a cell starts
// a three-member ZooKeeper ensemble of its own (Debian's zookeeper jars, launch), which its
// processes reach through ZOOKEEPER_SERVERS, and in whose failover cell the ensemble's leader
// is killed.

// ZooKeeperMinSession is the shortest session the zookeeper locks' cells ask for. The lab's
// ensemble grants 1 s (two ticks of 500 ms), but a client's reads time out after two thirds
// of its session: with 1 s, a loaded machine dropped connections that nothing had cut. The
// ensemble expires a session up to a tick after its timeout.
const ZooKeeperMinSession = 2 * time.Second

// isZooKeeper reports whether lock is one of the zookeeper locks.
func isZooKeeper(lock string) bool { return lock == "zookeeper" || lock == "zookeeper-nofence" }

// forZooKeeper is s as a zookeeper lock's cell runs it: the lease is the lock's session
// timeout, raised to ZooKeeperMinSession, and what the scenario means to outlast the lease
// outlasts the session, with its tick of slack, as the etcd cells do (forEtcd's numbers).
// The failover cell kills the ensemble's leader instead of a Redis master.
func (s Scenario) forZooKeeper() Scenario {
	if s.Name == "failover" {
		s.What = "the ZooKeeper ensemble's leader killed while a process holds the lock, and a new leader elected; think_ms 7000 outlasts the election; the 30 s lease is the session's timeout"
		return s
	}
	if s.LeaseMS >= int(ZooKeeperMinSession/time.Millisecond) {
		return s
	}
	s = s.forEtcd()
	switch s.Name {
	case "long-work":
		s.What = "think_ms 3000, longer than the lock's 2 s session"
	case "pause":
		s.What = "SIGSTOP of the process holding the lock, once it has read the stock, for 4 s, twice its 2 s session, then SIGCONT"
	case "partition":
		s.What = "the process holding the lock cut off from ZooKeeper, not from PostgreSQL, for 4 s, twice its 2 s session, as it starts think_ms 3000; then healed"
	}
	return s
}

// startZooKeeper starts the run's ensemble when a cell needs it and sets the processes'
// ZOOKEEPER_SERVERS.
func (r *run) startZooKeeper() error {
	if !slices.ContainsFunc(r.cfg.Cells, func(p Pair) bool { return isZooKeeper(p.Lock) }) {
		return nil
	}
	e, err := procs.StartZooKeeperEnsemble(3)
	if err != nil {
		return fmt.Errorf("zookeeper ensemble: %w", err)
	}
	r.zk = e
	r.env["ZOOKEEPER_SERVERS"] = strings.Join(e.Servers(), ",")
	return nil
}

// zkFailover kills the ensemble's leader while a process holds the lock at key, waits for a
// new leader, and says what it did. The killed member is started again by heal.
func (r *run) zkFailover(ctx context.Context, key string) string {
	hctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	a, err := holder(hctx, r.rdb, key, r.apis, func(pttl time.Duration) bool { return pttl != -2 })
	cancel()
	if err != nil {
		return "no fault: " + err.Error()
	}
	leader, err := procs.ZooKeeperLeader(r.zk.Members)
	if err != nil {
		return "no fault: " + err.Error()
	}
	leader.Stop()
	killed := time.Now()
	next, err := procs.ZooKeeperLeader(slices.DeleteFunc(slices.Clone(r.zk.Members), func(m *procs.ZooKeeper) bool { return m == leader }))
	r.recordFault(key, a.Pid(), history.FaultFailover, killed, time.Now()) // to the new leader
	if err != nil {
		return fmt.Sprintf("SIGKILL to the ZooKeeper leader (member %d) while %s (pid %d) was holding %s; %v", leader.ID, a.Name, a.Pid(), key, err)
	}
	return fmt.Sprintf("SIGKILL to the ZooKeeper leader (member %d) while %s (pid %d) was holding %s; member %d led %.1fs later",
		leader.ID, a.Name, a.Pid(), key, next.ID, time.Since(killed).Seconds())
}

// healZooKeeper starts again the members a cell killed.
func (r *run) healZooKeeper() error {
	if r.zk == nil {
		return nil
	}
	for _, m := range r.zk.Members {
		if err := m.Start(); err != nil {
			return err
		}
	}
	return nil
}
