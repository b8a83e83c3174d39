//go:build linux

package chaos_test

import (
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// zkEnv is the environment (see apiEnv) of API processes whose product locks live in the
// ZooKeeper ensemble at members (LOCK_BACKEND=zookeeper), in sessions of 2 s (LOCK_TTL, as
// with etcd; the test ensembles grant 1 s to 30 s), then env.
func zkEnv(members []*servers.ZooKeeper, env map[string]string) map[string]string {
	e := map[string]string{"LOCK_BACKEND": "zookeeper", "ZOOKEEPER_SERVERS": strings.Join(servers.ZooKeeperServers(members), ","), "LOCK_TTL": "2s"}
	maps.Copy(e, env)
	return e
}

// zkLock is a product's lock in a ZooKeeper ensemble, read as the API processes write it.
type zkLock struct {
	conn   *zk.Conn
	parent string // the lock's node, parent of its claims
}

// newZKLock returns the lock named key in the ensemble of members, read through a session of
// the test's own, closed when the test ends.
func newZKLock(t *testing.T, members []*servers.ZooKeeper, key string) zkLock {
	t.Helper()
	conn, _, err := zk.Connect(servers.ZooKeeperServers(members), 10*time.Second, zk.WithLogger(nopZKLogger{}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	return zkLock{conn: conn, parent: "/seckill/locks/" + url.PathEscape(key)}
}

type nopZKLogger struct{}

func (nopZKLogger) Printf(string, ...any) {}

// fence returns the lock's fence, as the API processes write it (ZooKeeperFenceBase + the
// creation zxid of the holder's node, the lowest in sequence), or 0 when no one holds it.
func (l zkLock) fence(t *testing.T) int64 {
	t.Helper()
	for range 3 { // the holder's node may go between the two reads
		children, _, err := l.conn.Children(l.parent)
		if err == zk.ErrNoNode || err == nil && len(children) == 0 {
			return 0
		}
		if err != nil {
			t.Fatalf("zookeeper: read lock %s: %v", l.parent, err)
		}
		seq := func(s string) string { return s[max(0, len(s)-10):] }
		slices.SortFunc(children, func(a, b string) int { return strings.Compare(seq(a), seq(b)) })
		ok, st, err := l.conn.Exists(l.parent + "/" + children[0])
		if err != nil {
			t.Fatalf("zookeeper: read lock %s: %v", l.parent, err)
		}
		if ok {
			return order.ZooKeeperFenceBase + st.Czxid
		}
	}
	t.Fatalf("zookeeper: lock %s: the first claim kept going between reads", l.parent)
	return 0
}

// grantSteps is how long a test waits, once a claim's node is the first, for its process to
// know it holds the lock: unlike etcd's, whose grant is the write of its key, a ZooKeeper
// claim is granted after its node is created, once the process has listed the children and
// read its node's zxid (a few ms). Frozen or cut off before then, the process never holds the
// lock, and its buyer is answered unavailable (seen once), not fenced. The critical section
// (think_ms 500 or 1500) outlasts it.
const grantSteps = 150 * time.Millisecond

// waitExpired waits until ZooKeeper has expired the session of the lock's holder with fence,
// frozen at stopped, and logs how long that took.
func (l zkLock) waitExpired(t *testing.T, log func(string, ...any), fence int64, stopped time.Time) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, "the frozen holder's session to expire", func() bool { return l.fence(t) != fence })
	log("its session expired %v after the fault", time.Since(stopped).Round(time.Millisecond))
}

// TestZooKeeperPausedHolderIsFenced is TestEtcdPausedHolderIsFenced with the product locks in
// ZooKeeper (a standalone member of the test's own): an API process is frozen (SIGSTOP) right
// after it took the product's lock, inside its critical section (think_ms 500), for 5 s, well
// past its session timeout (2 s). ZooKeeper expires its session and deletes its node, and
// another process takes the lock under a newer fence (a later zxid) and sells. When the frozen
// process resumes, its connection's read deadline has passed: either it learns of the loss
// first (suspended) and its batch ends before its transaction, or its statement runs and the
// fence, older than the one on the row, makes it write nothing. Its buyer is answered 503
// busy, and has no order.
func TestZooKeeperPausedHolderIsFenced(t *testing.T) {
	log := faultTest(t)
	members := servers.StartZooKeeper(t, 1)
	b, _ := sharedBackend(t)
	app := testenv.Name("zkpause")
	paused, other := b.startPair(t, "paused", withParam(t, b.dsn, "application_name", app),
		zkEnv(members, map[string]string{"LOCK_WAIT": "10s", "PURCHASE_TIMEOUT": "9s"}))
	s := newSale(t, other, b.dsn, product{strategy: "dlock", stock: 20, thinkMS: 500})
	lock := newZKLock(t, members, b.keys().Lock(s.id))
	apis := []*apiProc{paused, other}

	first := s.start(1, paused)
	s.waitBought(t, 1)
	fence := waitNewHolder(t, "a new lock holder on "+paused.Name, func() int64 { return lock.fence(t) })
	time.Sleep(grantSteps)
	stopped, victim := s.freeze(t, paused)
	log("%s frozen holding the lock with fence %d, buyer %d in flight", paused.Name, fence, victim)
	lock.waitExpired(t, log, fence, stopped)

	s.sellsNewer(t, other)
	newer := s.auditPG(t).Fence
	if newer <= fence {
		t.Fatalf("fence on the row %d, want more than the paused holder's %d", newer, fence)
	}
	time.Sleep(time.Until(stopped.Add(5 * time.Second))) // the fault: frozen 5s in all
	paused.Signal(syscall.SIGCONT)
	resumed := time.Now()
	log("%s resumed after %v; %s wrote fence %d meanwhile", paused.Name, time.Since(stopped).Round(time.Millisecond), other.Name, newer)
	first.stop()

	a := s.lateBuyerBusy(t, victim)
	log("%s after SIGCONT: buyer answered %s after %v; its sessions' statements since: %q; seckill_lock_lost_total %v",
		paused.Name, a.outcome(), a.done.Sub(a.sent).Round(time.Millisecond), sessions(t, s, app, "%", resumed),
		paused.Metric("seckill_lock_lost_total", ""))

	s.finish(t, apis...)
	s.verify(t, other, noneUnanswered)
}

// TestZooKeeperLeaderKilled is TestEtcdLeaderKilled with the product locks in a ZooKeeper
// ensemble of the test's own (three members): mid-sale its leader is killed (SIGKILL). The
// clients connected to it lose their connection (their locks are lost, suspended) and
// reconnect to another member within their session; the two members left elect a new leader.
// Buyers meanwhile get 503 busy or unavailable with Retry-After, never a 500; then the sale
// goes on and sells out without an oversell. The test logs the time without sales: the
// longest gap between two 201s around the kill.
func TestZooKeeperLeaderKilled(t *testing.T) {
	log := faultTest(t)
	members := servers.StartZooKeeper(t, 3)
	b, _ := sharedBackend(t)
	apis := b.startAPIs(t, 3, zkEnv(members, map[string]string{"LOCK_WAIT": "1s"}))
	s := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 300, thinkMS: 5})
	s.start(9, apis...)
	s.waitBought(t, 30)

	leader := servers.ZooKeeperLeader(t, members)
	before := s.auditPG(t).Orders
	leader.Stop()
	killed := time.Now()
	log("killed the zookeeper leader, member %d; %d orders in PostgreSQL", leader.ID, before)
	next := servers.ZooKeeperLeader(t, members)
	log("member %d is the new leader, %v after the kill", next.ID, time.Since(killed).Round(time.Millisecond))
	s.waitBought(t, s.bought.Load()+30) // the sale goes on
	after := s.auditPG(t).Orders
	log("orders in PostgreSQL: %d at the kill, %d now", before, after)
	if after <= before {
		t.Errorf("orders %d after the kill, %d before: the sale did not go on", after, before)
	}
	window := killed.Add(10 * time.Second)
	s.finish(t, apis...)
	gap, from := s.longestGap(killed.Add(-time.Second), window)
	log("time without sales: %v, from %v after the kill", gap.Round(time.Millisecond), from.Sub(killed).Round(time.Millisecond))
	log("sold out; answers to purchases sent within 10s of the kill: %s", formatCounts(s.countsOf(func(a answer) bool {
		return !a.sent.Before(killed) && a.sent.Before(window)
	})))
	s.verify(t, apis[1], noneUnanswered)
}

// longestGap is the longest time between two 201 answers (by when they came) of those that
// came between from and to, and when it began.
func (s *sale) longestGap(from, to time.Time) (time.Duration, time.Time) {
	var at []time.Time
	for _, a := range s.answersSnapshot() {
		if a.status == http.StatusCreated && !a.done.Before(from) && a.done.Before(to) {
			at = append(at, a.done)
		}
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	var gap time.Duration
	var start time.Time
	for i := 1; i < len(at); i++ {
		if d := at[i].Sub(at[i-1]); d > gap {
			gap, start = d, at[i-1]
		}
	}
	return gap, start
}
