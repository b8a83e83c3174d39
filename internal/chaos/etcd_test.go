//go:build linux

package chaos_test

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// etcdEnv is the environment (see apiEnv) of API processes whose product locks live in the
// etcd at endpoints (LOCK_BACKEND=etcd), with etcd's shortest lease (LOCK_TTL 2s: etcd grants
// none shorter at its default timing), then env. The lock keys carry the backend's prefix,
// as in Redis.
func etcdEnv(endpoints []string, env map[string]string) map[string]string {
	e := map[string]string{"LOCK_BACKEND": "etcd", "ETCD_ENDPOINTS": strings.Join(endpoints, ","), "LOCK_TTL": "2s"}
	maps.Copy(e, env)
	return e
}

// etcdLock is a product's lock in an etcd, read as the API processes write it.
type etcdLock struct {
	cli *clientv3.Client
	key string
}

// fence returns the lock's fence, as the API processes write it (EtcdFenceBase + the create
// revision of the holder's key, the first created under key/), or 0 when no one holds it.
func (l etcdLock) fence(t *testing.T) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := l.cli.Get(ctx, l.key+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		t.Fatalf("etcd: read lock %s: %v", l.key, err)
	}
	if len(resp.Kvs) == 0 {
		return 0
	}
	return order.EtcdFenceBase + resp.Kvs[0].CreateRevision
}

// waitExpired waits until etcd has expired the lease of the lock's holder with fence, frozen
// at stopped, and logs how long that took.
func (l etcdLock) waitExpired(t *testing.T, log func(string, ...any), fence int64, stopped time.Time) {
	t.Helper()
	testenv.Eventually(t, 10*time.Second, "the frozen holder's lease to expire", func() bool { return l.fence(t) != fence })
	log("its lease expired %v after SIGSTOP", time.Since(stopped).Round(time.Millisecond))
}

// startEtcdPair starts two API processes whose product locks live in the shared etcd, the
// first named name on PostgreSQL at dsn, the second named "other" on b's, waits until both
// are ready, and puts a dlock product of 20 units with thinkMS on sale through the other; it
// returns them with the sale and the product's lock. A buyer may wait long for a lock
// (LOCK_WAIT 10s: a holder's lease runs out meanwhile), and is answered within
// PURCHASE_TIMEOUT 9s, before the test's client gives up.
func (b backend) startEtcdPair(t *testing.T, name, dsn string, thinkMS int) (*apiProc, *apiProc, *sale, etcdLock) {
	t.Helper()
	endpoints := testenv.EtcdEndpoints(t)
	first, other := b.startPair(t, name, dsn, etcdEnv(endpoints, map[string]string{"LOCK_WAIT": "10s", "PURCHASE_TIMEOUT": "9s"}))
	s := newSale(t, other, b.dsn, product{strategy: "dlock", stock: 20, thinkMS: thinkMS})
	return first, other, s, etcdLock{testenv.Etcd(t, endpoints...), b.keys().Lock(s.id)}
}

// etcdClusterSale starts an etcd cluster of the test's own (three members) and n API
// processes on a shared backend (see sharedBackend) whose product locks live in it, with
// LOCK_WAIT 1s, and puts a dlock product of stock units (think_ms 5) on sale through the
// first.
func etcdClusterSale(t *testing.T, n, stock int) ([]*servers.Etcd, []*apiProc, *sale) {
	t.Helper()
	members := servers.StartEtcdCluster(t, 3)
	b, _ := sharedBackend(t)
	apis := b.startAPIs(t, n, etcdEnv(servers.EtcdEndpoints(members), map[string]string{"LOCK_WAIT": "1s"}))
	return members, apis, newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: stock, thinkMS: 5})
}

// readiness is p's GET /readyz?full=1, the report that names each backend down at the
// process's last check (every 2 s): its status (0: no answer within 5 s) and checks.
func readiness(p *apiProc) (int, api.Readiness) {
	var r api.Readiness
	status, body := p.Get("/readyz?full=1", "")
	_ = json.Unmarshal(body, &r)
	return status, r
}

// first201 returns the answer 201 that came first among those keep accepts.
func (s *sale) first201(keep func(answer) bool) (answer, bool) {
	var first answer
	for _, a := range s.answersSnapshot() {
		if a.status == http.StatusCreated && keep(a) && (first.done.IsZero() || a.done.Before(first.done)) {
			first = a
		}
	}
	return first, !first.done.IsZero()
}

// countsOf tallies by outcome the answers keep accepts.
func (s *sale) countsOf(keep func(answer) bool) map[string]int {
	return s.countsBy(keep, answer.outcome)
}

// countsBy tallies by key the answers keep accepts.
func (s *sale) countsBy(keep func(answer) bool, key func(answer) string) map[string]int {
	n := map[string]int{}
	for _, a := range s.answersSnapshot() {
		if keep(a) {
			n[key(a)]++
		}
	}
	return n
}

// TestEtcdSale: the plain sale, with the product locks in etcd (the shared one at
// ETCD_ENDPOINTS, keys under the test's own prefix): three API processes, a crowd of buyers
// far larger than the stock, no fault. The audit must hold as it does with Redis locks.
func TestEtcdSale(t *testing.T) {
	faultTest(t)
	b, _ := sharedBackend(t)
	apis := b.startAPIs(t, 3, etcdEnv(testenv.EtcdEndpoints(t), nil))
	s := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 40, thinkMS: 2})
	s.start(120, apis...).wg.Wait() // a crowd three times the stock at once, until sold out
	s.finish(t, apis...)
	s.verify(t, apis[1], noneUnanswered)
	if n := len(s.answersSnapshot()); n < 3*s.stock {
		t.Errorf("%d buyers for %d units: the crowd was not larger than the stock", n, s.stock)
	}
}

// TestEtcdLeaderKilled: the product locks of three API processes live in an etcd cluster of
// the test's own (three members); mid-sale its leader is killed (SIGKILL). The two members
// left elect a new leader within a couple of seconds, during which lock requests may fail:
// those buyers get 503 busy or unavailable with Retry-After, never a 500. Then the sale goes
// on: orders are made after the kill, and it sells out on two members, without an oversell.
func TestEtcdLeaderKilled(t *testing.T) {
	log := faultTest(t)
	members, apis, s := etcdClusterSale(t, 3, 300)
	s.start(9, apis...)
	s.waitBought(t, 30)

	leader := servers.EtcdLeader(t, members)
	before := s.auditPG(t).Orders
	leader.Stop()
	killed := time.Now()
	log("killed the etcd leader %s; %d orders in PostgreSQL", leader.Name, before)
	next := servers.EtcdLeader(t, members)
	log("%s is the new leader, %v after the kill", next.Name, time.Since(killed).Round(time.Millisecond))
	s.waitBought(t, s.bought.Load()+30) // the sale goes on
	after := s.auditPG(t).Orders
	log("orders in PostgreSQL: %d at the kill, %d now", before, after)
	if after <= before {
		t.Errorf("orders %d after the kill, %d before: the sale did not go on", after, before)
	}
	firsts := map[string]string{}
	for _, p := range apis {
		firsts[p.Name] = "none yet"
		if a, ok := s.first201(func(a answer) bool { return a.target == p.Name && !a.sent.Before(killed) }); ok {
			firsts[p.Name] = a.done.Sub(killed).Round(time.Millisecond).String()
		}
	}
	log("first 201 to a purchase sent after the kill, by process, after the kill: %v", firsts)
	window := killed.Add(10 * time.Second)
	s.finish(t, apis...)
	log("sold out; answers to purchases sent within 10s of the kill: %s", formatCounts(s.countsOf(func(a answer) bool {
		return !a.sent.Before(killed) && a.sent.Before(window)
	})))
	s.verify(t, apis[1], noneUnanswered)
}
