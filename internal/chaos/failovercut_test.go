//go:build linux

package chaos_test

import (
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestPostgresPrimaryCutOff: as TestPostgresSwitchoverThenKill, but each node runs in a
// network namespace of its own, and the primary, with COMMITs waiting for its standby, is cut
// off silently (every packet to and from it dropped, no RST, no ICMP): the processes' COMMITs
// in flight there get no answer, nor does anything else they send it, and it can reach
// neither etcd nor its standby. It demotes itself once it cannot renew its leader key (its
// COMMITs still waiting could never be acknowledged: their standby is gone), and the standby
// is promoted once the key expires; the processes find it through the multi-host URL, each
// new connection trying the silent node for connect_timeout (2 s) first. Once the network is
// back the old primary rejoins as the new one's standby, its unreplicated transactions
// rewound away (pg_rewind). Every invariant holds on the new primary, as after the kill.
func TestPostgresPrimaryCutOff(t *testing.T) {
	log := faultTest(t)
	c, b, rdb := onPatroni(t, servers.PatroniOptions{Netns: true})
	apis := b.startAPIs(t, 2, failoverEnv)
	fs := startFailoverSales(t, b, rdb, apis, failoverCells(t, failoverCell{strategy: "redis", window: true}))
	old, standby := c.Primary(), c.Standby()
	log("selling on %s (primary) and %s (synchronous standby)", old.Name, standby.Name)

	inFlight := commitsInFlight(t, old, 1)
	onset := time.Now()
	old.Isolate()
	old.ResumeWALSenders() // they send into the void now
	log("%s cut off with %d COMMITs waiting for the standby", old.Name, inFlight)
	if promoted := c.WaitPrimary(60*time.Second, old); promoted != standby {
		t.Fatalf("%s promoted, want the synchronous standby %s", promoted.Name, standby.Name)
	}
	log("%s promoted", standby.Name)
	logOutages(t, "primary cut off", fs.outages(t, onset))
	old.Rejoin()
	log("%s's network back", old.Name)
	c.WaitReplicating(90 * time.Second)
	log("%s streams from %s as its synchronous standby", old.Name, standby.Name)
	logSettled(t, apis)
	fs.finish(t, log, apis)
	noErrorsLogged(t, apis...)
}
