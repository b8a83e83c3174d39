package servers

import "github.com/seckill/seckill/internal/launch"

// ZooKeeper is one member of a ZooKeeper ensemble of the test's own (see launch.ZooKeeper),
// killed when the test ends. Start, Pause and Resume fail the test that started it, so call
// them from its goroutine.
type ZooKeeper struct {
	*launch.ZooKeeper
	t T
}

// StartZooKeeper starts n ZooKeeper members as one ensemble on free loopback ports, with their
// own data directories, and waits until each serves (see launch.StartZooKeeperEnsemble). When
// the test ends they are killed and their data removed, and the tail of each one's log is
// printed if it failed.
func StartZooKeeper(t T, n int) []*ZooKeeper {
	t.Helper()
	e, err := launch.StartZooKeeperEnsemble(n)
	check(t, err)
	return wrapZooKeeper(t, e)
}

// wrapZooKeeper kills e's members and removes their data when the test ends, printing the tail
// of each one's log if it failed, and returns them.
func wrapZooKeeper(t T, e *launch.ZooKeeperEnsemble) []*ZooKeeper {
	t.Cleanup(func() {
		if t.Failed() {
			for _, m := range e.Members {
				t.Logf("zookeeper member %d (%s) log, last lines:\n%s", m.ID, m.Addr, tail(m.Log(), 15))
			}
		}
		if err := e.Close(); err != nil {
			t.Errorf("close the zookeeper ensemble: %v", err)
		}
	})
	out := make([]*ZooKeeper, len(e.Members))
	for i, m := range e.Members {
		out[i] = &ZooKeeper{ZooKeeper: m, t: t}
	}
	return out
}

// ZooKeeperServers returns the members' client addresses, host:port.
func ZooKeeperServers(members []*ZooKeeper) []string {
	out := make([]string, len(members))
	for i, m := range members {
		out[i] = m.Addr
	}
	return out
}

// Start starts the member again on its data (see launch.ZooKeeper.Start).
func (m *ZooKeeper) Start() {
	m.t.Helper()
	must(m.t, m.ZooKeeper.Start())
}

// Pause freezes the member (SIGSTOP). Resume lets it go on.
func (m *ZooKeeper) Pause() {
	m.t.Helper()
	must(m.t, m.ZooKeeper.Pause())
}

// Resume continues a paused member (SIGCONT).
func (m *ZooKeeper) Resume() {
	m.t.Helper()
	must(m.t, m.ZooKeeper.Resume())
}

// ZooKeeperLeader waits up to 15 s for the leader of members (see launch.ZooKeeperLeader), or
// fails the test.
func ZooKeeperLeader(t T, members []*ZooKeeper) *ZooKeeper {
	t.Helper()
	ms := make([]*launch.ZooKeeper, len(members))
	for i, m := range members {
		ms[i] = m.ZooKeeper
	}
	l, err := launch.ZooKeeperLeader(ms)
	must(t, err)
	for _, m := range members {
		if m.ZooKeeper == l {
			return m
		}
	}
	t.Fatalf("zookeeper leader %d is none of the members", l.ID)
	return nil
}

// StartZooKeeperIn is StartZooKeeper with member 1 in the network namespace ns, which the
// test cuts off silently with ns.Isolate (see launch.StartZooKeeperEnsembleIn). Member 1 is
// the first returned.
func StartZooKeeperIn(t T, n int, ns *Netns) []*ZooKeeper {
	t.Helper()
	e, err := launch.StartZooKeeperEnsembleIn(n, ns.Netns)
	check(t, err)
	return wrapZooKeeper(t, e)
}

// ZooKeeperJava checks that a ZooKeeper member can be started here (java and Debian's
// zookeeper jars), for a test whose program starts an ensemble of its own; it skips the test
// (fails it under SECKILL_REQUIRE_ALL) if not.
func ZooKeeperJava(t T) {
	t.Helper()
	_, _, err := launch.ZooKeeperJava()
	check(t, err)
}
