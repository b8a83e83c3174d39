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
