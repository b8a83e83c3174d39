package servers

import "github.com/seckill/seckill/internal/launch"

// Netns is a network namespace of the test's own (see launch.Netns). It is removed, with its
// forwarders, when the test ends, also when it fails. Its methods are safe for concurrent
// use, but Partition, Heal and Forward fail the test, so call them from the test's goroutine.
type Netns struct {
	*launch.Netns
	t T
}

// StartNetns creates a network namespace of the test's own (see launch.StartNetns) and
// removes it when the test ends. It skips the test unless it runs as root with ip and nft
// installed.
func StartNetns(t T) *Netns {
	t.Helper()
	n, err := launch.StartNetns(t.Name())
	check(t, err)
	closeAtEnd(t, "network namespace "+n.Name, n.Close)
	return &Netns{Netns: n, t: t}
}

// NetnsSupported says why StartNetns cannot run here (not root, ip or nft missing), or nil.
func NetnsSupported() error { return launch.NetnsSupported() }

// Partition drops every packet between the namespace and each of addrs, silently (see
// launch.Netns.Partition).
func (n *Netns) Partition(addrs ...string) {
	n.t.Helper()
	if err := n.Netns.Partition(addrs...); err != nil {
		n.t.Fatal(err)
	}
}

// Heal lifts every partition: packets flow again, and TCP retransmits what was lost.
func (n *Netns) Heal() {
	n.t.Helper()
	if err := n.Netns.Heal(); err != nil {
		n.t.Fatal(err)
	}
}

// Forward starts a TCP forwarder from the namespace's host end to target and returns the
// address to give the processes inside in its place (see launch.Netns.Forward). It is
// stopped, its connections cut, when the test ends.
func (n *Netns) Forward(target string) string {
	n.t.Helper()
	addr, err := n.Netns.Forward(target)
	if err != nil {
		n.t.Fatal(err)
	}
	return addr
}
