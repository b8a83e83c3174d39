package servers

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/seckill/seckill/internal/launch"
)

// PatroniOptions configures StartPatroni (see launch.PatroniOptions). Without Etcd, the
// cluster gets an etcd member of its own (StartEtcd).
type PatroniOptions = launch.PatroniOptions

// Patroni is a PostgreSQL cluster of the test's own managed by Patroni (see launch.Patroni):
// every node is killed and its data removed when the test ends, also when it fails. Its
// methods fail the test, so call them from the test's goroutine.
type Patroni struct {
	*launch.Patroni
	Nodes []*PatroniNode
	t     T
}

// PatroniNode is one node of a Patroni cluster of the test's (see launch.PatroniNode).
type PatroniNode struct {
	*launch.PatroniNode
	t T
}

// StartPatroni starts a Patroni cluster with the project's configuration and waits until it
// has a primary and its standbys stream from it (see launch.StartPatroni). It skips the test
// when not root, without a postgres OS user, or without patroni, util-linux's unshare and
// setpriv, or PostgreSQL's server binaries. When the test ends the cluster is thrown away,
// and the tail of each node's log printed if the test failed; with SERVERS_LOGDIR set, each
// whole log is written to $SERVERS_LOGDIR/<test>-patroni-<node>.log.
func StartPatroni(t T, opt PatroniOptions) *Patroni {
	t.Helper()
	if len(opt.Etcd) == 0 {
		opt.Etcd = []string{StartEtcd(t).ClientURL}
	}
	if opt.Name == "" {
		opt.Name = t.Name()
	}
	c, err := launch.StartPatroni(opt)
	check(t, err)
	t.Cleanup(func() {
		for _, n := range c.Nodes {
			if t.Failed() {
				t.Logf("Patroni %s log (last lines):\n%s", n.Name, n.Log().Tail(25))
			}
			if dir := os.Getenv("SERVERS_LOGDIR"); dir != "" {
				file := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+"-patroni-"+n.Name+".log")
				if err := os.WriteFile(file, []byte(n.Log().String()), 0o644); err != nil {
					t.Errorf("write %s's log: %v", n.Name, err)
				}
			}
		}
		if err := c.Close(); err != nil {
			t.Errorf("close the Patroni cluster: %v", err)
		}
	})
	p := &Patroni{Patroni: c, t: t}
	for _, n := range c.Nodes {
		p.Nodes = append(p.Nodes, &PatroniNode{PatroniNode: n, t: t})
	}
	return p
}

// node is the wrapper of n.
func (c *Patroni) node(n *launch.PatroniNode) *PatroniNode {
	for _, w := range c.Nodes {
		if w.PatroniNode == n {
			return w
		}
	}
	c.t.Fatalf("Patroni node %s is not the cluster's", n.Name)
	return nil
}

// Primary returns the node that is the primary now, or fails the test (see
// launch.Patroni.Primary).
func (c *Patroni) Primary() *PatroniNode {
	c.t.Helper()
	p, err := c.Patroni.Primary()
	must(c.t, err)
	return c.node(p)
}

// Standby returns a node that runs and is not the primary, or fails the test.
func (c *Patroni) Standby() *PatroniNode {
	c.t.Helper()
	p := c.Primary()
	for _, n := range c.Nodes {
		if n != p && n.Running() {
			return n
		}
	}
	c.t.Fatal("the Patroni cluster has no standby running")
	return nil
}

// WaitPrimary waits up to d until a node other than not (nil: any) is the primary and takes
// a read-write connection, and returns it; it fails the test otherwise.
func (c *Patroni) WaitPrimary(d time.Duration, not *PatroniNode) *PatroniNode {
	c.t.Helper()
	var ln *launch.PatroniNode
	if not != nil {
		ln = not.PatroniNode
	}
	p, err := c.Patroni.WaitPrimary(d, ln)
	must(c.t, err)
	return c.node(p)
}

// WaitReplicating waits up to d until every other running node streams from the primary,
// one synchronously in synchronous_mode; it fails the test otherwise.
func (c *Patroni) WaitReplicating(d time.Duration) {
	c.t.Helper()
	must(c.t, c.Patroni.WaitReplicating(d))
}

// Switchover performs a planned switchover to the standby to (see launch.Patroni.Switchover).
func (c *Patroni) Switchover(to *PatroniNode) {
	c.t.Helper()
	must(c.t, c.Patroni.Switchover(to.PatroniNode))
}

// Kill kills every process of the node at once (see launch.PatroniNode.Kill).
func (n *PatroniNode) Kill() {
	n.t.Helper()
	must(n.t, n.PatroniNode.Kill())
}

// Start starts the node again on its data (see launch.PatroniNode.Start).
func (n *PatroniNode) Start() {
	n.t.Helper()
	must(n.t, n.PatroniNode.Start())
}

// Isolate cuts the node off silently (see launch.PatroniNode.Isolate); Rejoin lifts it.
func (n *PatroniNode) Isolate() {
	n.t.Helper()
	must(n.t, n.PatroniNode.Isolate())
}

// Rejoin lifts Isolate.
func (n *PatroniNode) Rejoin() {
	n.t.Helper()
	must(n.t, n.PatroniNode.Rejoin())
}

// PauseWALSenders stops the node's WAL senders and returns how many (see
// launch.PatroniNode.PauseWALSenders); it fails the test if there are none.
func (n *PatroniNode) PauseWALSenders() int {
	n.t.Helper()
	k, err := n.PatroniNode.PauseWALSenders()
	must(n.t, err)
	if k == 0 {
		n.t.Fatalf("%s has no WAL sender to pause", n.Name)
	}
	return k
}
