package servers

import "github.com/seckill/seckill/internal/launch"

// EtcdBin returns the path of etcd, or skips the test.
func EtcdBin(t T) string {
	t.Helper()
	path, err := launch.EtcdBin()
	check(t, err)
	return path
}

// Etcd is one etcd member of the test's own (see launch.Etcd), killed when the test ends.
// Start, Pause and Resume fail the test that started it, so call them from its goroutine.
type Etcd struct {
	*launch.Etcd
	t T
}

// StartEtcd starts a single etcd member on free loopback ports and waits until it is healthy.
func StartEtcd(t T) *Etcd {
	t.Helper()
	return StartEtcdCluster(t, 1)[0]
}

// StartEtcdCluster starts n etcd members on free loopback ports as one new cluster and waits
// up to 20 s until each is healthy (see launch.StartEtcdCluster). When the test ends they are
// killed, and the tail of each one's log is printed if it failed.
func StartEtcdCluster(t T, n int) []*Etcd {
	t.Helper()
	c, err := launch.StartEtcdCluster(n)
	check(t, err)
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("close the etcd cluster: %v", err)
		}
		if t.Failed() {
			for _, m := range c.Members {
				t.Logf("etcd member %s (%s) log, last lines:\n%s", m.Name, m.ClientURL, tail(m.Log(), 15))
			}
		}
	})
	out := make([]*Etcd, n)
	for i, m := range c.Members {
		out[i] = &Etcd{Etcd: m, t: t}
	}
	return out
}

// Start starts the member again on its data and waits until it is healthy, or only until it
// accepts connections without a quorum (see launch.Etcd.Start).
func (m *Etcd) Start() {
	m.t.Helper()
	must(m.t, m.Etcd.Start())
}

// Pause freezes the member (SIGSTOP). Resume lets it go on.
func (m *Etcd) Pause() {
	m.t.Helper()
	must(m.t, m.Etcd.Pause())
}

// Resume continues a paused member (SIGCONT).
func (m *Etcd) Resume() {
	m.t.Helper()
	must(m.t, m.Etcd.Resume())
}

// EtcdEndpoints returns the members' client URLs.
func EtcdEndpoints(members []*Etcd) []string {
	return launch.EtcdEndpoints(unwrapEtcd(members))
}

// EtcdLeader waits up to 15 s until a majority of members name the same leader, one of
// members that runs unpaused, and returns it; it fails the test otherwise (see
// launch.EtcdLeader).
func EtcdLeader(t T, members []*Etcd) *Etcd {
	t.Helper()
	l, err := launch.EtcdLeader(unwrapEtcd(members))
	must(t, err)
	for _, m := range members {
		if m.Etcd == l {
			return m
		}
	}
	t.Fatalf("etcd leader %s is none of the members", l.Name)
	return nil
}

func unwrapEtcd(members []*Etcd) []*launch.Etcd {
	out := make([]*launch.Etcd, len(members))
	for i, m := range members {
		out[i] = m.Etcd
	}
	return out
}
