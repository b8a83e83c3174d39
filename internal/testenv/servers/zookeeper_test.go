package servers_test

import (
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestZooKeeperEnsemble: three members serve, one leads; with the leader killed another is
// elected; started again, the old leader rejoins as a follower.
func TestZooKeeperEnsemble(t *testing.T) {
	members := servers.StartZooKeeper(t, 3)
	leader := servers.ZooKeeperLeader(t, members)
	start := time.Now()
	leader.Stop()
	next := servers.ZooKeeperLeader(t, members)
	t.Logf("member %d led; member %d leads %v after it was killed", leader.ID, next.ID, time.Since(start).Round(time.Millisecond))
	if next == leader {
		t.Fatal("the killed leader still leads")
	}
	leader.Start()
	if got := leader.Mode(); got != "follower" {
		t.Errorf("the old leader restarted is %q, want follower", got)
	}
}

// TestZooKeeperMemberIsolated: with member 1 in a network namespace, the ensemble serves; cut
// off silently (Isolate), member 1 stops serving while the two others keep a leader; rejoined,
// it serves again.
func TestZooKeeperMemberIsolated(t *testing.T) {
	ns := servers.StartNetns(t)
	members := servers.StartZooKeeperIn(t, 3, ns)
	servers.ZooKeeperLeader(t, members)
	if err := ns.Isolate(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	rest := members[1:]
	leader := servers.ZooKeeperLeader(t, rest)
	t.Logf("member 1 isolated; member %d leads the two others %v later", leader.ID, time.Since(start).Round(time.Millisecond))
	if err := ns.Rejoin(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for members[0].Mode() == "" {
		if time.Now().After(deadline) {
			t.Fatal("member 1 does not serve 20 s after it rejoined")
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("member 1 serves again as %s", members[0].Mode())
}
