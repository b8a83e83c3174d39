//go:build linux

package chaos_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// startInNetnsZK is startInNetns for an API process whose product locks live in the ZooKeeper
// ensemble of members (zkEnv), reached, like PostgreSQL and Redis, through forwarders of the
// test's on the namespace's host end: the process is returned with those forwarders, which
// the test cuts it off from (ns.Partition).
func (b backend) startInNetnsZK(t *testing.T, name string, members []*servers.ZooKeeper, env map[string]string) (*cutProc, []string) {
	t.Helper()
	ns := servers.StartNetns(t)
	u, err := url.Parse(b.dsn)
	if err != nil || u.Host == "" {
		t.Fatalf("DATABASE_URL must be a postgres:// URL for this test: %v", err)
	}
	p := &cutProc{ns: ns, pg: ns.Forward(u.Host), redis: ns.Forward(b.redis)}
	var zk []string
	for _, m := range members {
		zk = append(zk, ns.Forward(m.Addr))
	}
	u.Host = p.pg
	e := b.apiEnv(zkEnv(members, env))
	e["DATABASE_URL"], e["REDIS_ADDR"], e["ZOOKEEPER_SERVERS"] = u.String(), p.redis, strings.Join(zk, ",")
	p.apiProc = servers.StartAPIIn(t, ns, name, e)
	return p, zk
}

// TestZooKeeperHolderCutOff: an API process in a network namespace of its own holds a
// product's ZooKeeper lock, inside its critical section (think_ms 1500), when it is cut off
// from the ensemble silently (its packets to every member dropped; PostgreSQL and Redis still
// reached) for 8 s. Its client hears no answer to its pings for two thirds of its session (2 s)
// and suspends: the holder's context ends and its batch with it, or its write, if already
// sent, is a valid holder's. The ensemble, hearing nothing, expires the session and deletes
// its node; another process takes the lock under a newer fence and sells. The cut-off
// buyer is answered 503 busy with no order; once healed, the process finds its session
// expired, opens another, and sells again; the sale verifies.
func TestZooKeeperHolderCutOff(t *testing.T) {
	log := faultTest(t)
	members := servers.StartZooKeeper(t, 1)
	b, _ := sharedBackend(t)
	env := map[string]string{"LOCK_WAIT": "10s", "PURCHASE_TIMEOUT": "9s"}
	cut, zkFwd := b.startInNetnsZK(t, "cut", members, env)
	other := b.startAPIs(t, 1, zkEnv(members, env))[0]
	apis := []*apiProc{cut.apiProc, other}
	s := newSale(t, other, b.dsn, product{strategy: "dlock", stock: 20, thinkMS: 1500})
	lock := newZKLock(t, members, b.keys().Lock(s.id))

	first := s.start(1, cut.apiProc)
	s.waitBought(t, 1)
	fence := waitNewHolder(t, "a new lock holder on "+cut.Name, func() int64 { return lock.fence(t) })
	time.Sleep(grantSteps)
	cut.ns.Partition(zkFwd...)
	onset := time.Now()
	victims := s.inflightUsers(cut.Name)
	log("%s cut off from zookeeper holding the lock with fence %d; its buyers in flight: %v", cut.Name, fence, victims)
	lock.waitExpired(t, log, fence, onset)
	s.sellsNewer(t, other)
	newer := s.auditPG(t).Fence
	if newer <= fence {
		t.Fatalf("fence on the row %d, want more than the cut-off holder's %d", newer, fence)
	}
	time.Sleep(time.Until(onset.Add(partitionFor)))
	first.stop()
	cut.ns.Heal()
	healed := time.Now()
	log("healed after %v; %s wrote fence %d meanwhile", healed.Sub(onset).Round(time.Millisecond), other.Name, newer)
	if len(victims) == 1 {
		a := s.lateBuyerBusy(t, victims[0])
		log("the cut-off holder's buyer answered %s %v after the cut; seckill_lock_lost_total on %s: %v",
			a.outcome(), a.done.Sub(onset).Round(time.Millisecond), cut.Name, cut.Metric("seckill_lock_lost_total", ""))
	} else {
		t.Errorf("buyers in flight on %s at the cut: %v, want exactly one", cut.Name, victims)
	}
	log("during the cut %s answered: %s", cut.Name, s.answersOf(cut.Name, onset, healed))
	s.start(1, cut.apiProc)
	log("%s sells again %v after the heal", cut.Name, s.sellsAgain(t, cut.apiProc, healed).Round(time.Millisecond))
	s.finish(t, apis...)
	s.verify(t, other, noneUnanswered)
}

// TestZooKeeperMemberCutOff: the product locks of three API processes live in a ZooKeeper
// ensemble of the test's own, member 1 of which runs in a network namespace; mid-sale member 1
// is cut off silently (every packet through its namespace dropped: its peers and its clients
// hear nothing, no RST) for 8 s, then rejoins. A client connected to it hears no answer to its
// pings and suspends (its locks are lost) after two thirds of its session, then reconnects to
// another member; if member 1 led, the two others elect a leader. The sale goes on and sells
// out without an oversell; buyers meanwhile get 503 busy or unavailable, never a 500. The
// test logs the time without sales.
func TestZooKeeperMemberCutOff(t *testing.T) {
	log := faultTest(t)
	ns := servers.StartNetns(t)
	members := servers.StartZooKeeperIn(t, 3, ns)
	b, _ := sharedBackend(t)
	apis := b.startAPIs(t, 3, zkEnv(members, map[string]string{"LOCK_WAIT": "1s"}))
	// Each process's client picks a member at random: restart the first until some process is
	// on member 1, so that the cut reaches clients (its session comes from /readyz's check).
	for try := 0; members[0].Sessions() == 0; try++ {
		if try == 8 {
			t.Fatal("no API process connected to member 1 in 8 starts")
		}
		apis[0].Stop()
		apis[0].Restart()
		apis[0].WaitReady("/readyz")
	}
	log("%d sessions on member 1", members[0].Sessions())
	s := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 300, thinkMS: 5})
	s.start(9, apis...)
	s.waitBought(t, 30)

	role := members[0].Mode()
	before := s.auditPG(t).Orders
	if err := ns.Isolate(); err != nil {
		t.Fatal(err)
	}
	cutAt := time.Now()
	log("cut off zookeeper member 1 (%s, the %s) silently; %d orders in PostgreSQL", members[0].Addr, role, before)
	leader := servers.ZooKeeperLeader(t, members[1:])
	log("member %d leads the two others %v after the cut", leader.ID, time.Since(cutAt).Round(time.Millisecond))
	s.waitBought(t, s.bought.Load()+30) // the sale goes on
	time.Sleep(time.Until(cutAt.Add(partitionFor)))
	if err := ns.Rejoin(); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	log("member 1 rejoined after %v; orders in PostgreSQL: %d", healed.Sub(cutAt).Round(time.Millisecond), s.auditPG(t).Orders)
	s.finish(t, apis...)
	gap, from := s.longestGap(cutAt.Add(-time.Second), healed)
	log("time without sales: %v, from %v after the cut", gap.Round(time.Millisecond), from.Sub(cutAt).Round(time.Millisecond))
	log("sold out; answers to purchases sent during the cut: %s", formatCounts(s.countsOf(func(a answer) bool {
		return !a.sent.Before(cutAt) && a.sent.Before(healed)
	})))
	for _, p := range apis {
		log("%s seckill_lock_lost_total %v", p.Name, p.Metric("seckill_lock_lost_total", ""))
	}
	s.verify(t, apis[1], noneUnanswered)
}
