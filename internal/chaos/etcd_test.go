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

// lockHolder returns the fence of the lock named key in cli's etcd, as the API processes
// write it (EtcdFenceBase + the create revision of the holder's key, the first created under
// key/), or 0 when no one holds it.
func lockHolder(t *testing.T, cli *clientv3.Client, key string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, key+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		t.Fatalf("etcd: read lock %s: %v", key, err)
	}
	if len(resp.Kvs) == 0 {
		return 0
	}
	return order.EtcdFenceBase + resp.Kvs[0].CreateRevision
}

// startEtcdPair starts two API processes whose product locks live in the etcd at endpoints,
// the first named name on PostgreSQL at dsn, the second named "other" on b's, and waits
// until both are ready. A buyer may wait long for a lock (LOCK_WAIT 10s: a holder's lease
// runs out meanwhile), and is answered within PURCHASE_TIMEOUT 9s, before the test's client
// gives up.
func (b backend) startEtcdPair(t *testing.T, endpoints []string, name, dsn string) (*apiProc, *apiProc) {
	t.Helper()
	env := map[string]string{"LOCK_WAIT": "10s", "PURCHASE_TIMEOUT": "9s", "DATABASE_URL": dsn}
	first := b.startAPI(t, name, etcdEnv(endpoints, env))
	env["DATABASE_URL"] = b.dsn
	other := b.startAPI(t, "other", etcdEnv(endpoints, env))
	first.WaitReady("/readyz")
	other.WaitReady("/readyz")
	return first, other
}

// readiness is p's GET /readyz: its status (0: no answer within 5 s) and checks.
func readiness(p *apiProc) (int, api.Readiness) {
	var r api.Readiness
	status, body := p.Get("/readyz", "")
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
	skipShort(t)
	t.Parallel()
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
	skipShort(t)
	t.Parallel()
	log := timeline(t)
	members := servers.StartEtcdCluster(t, 3)
	b, _ := sharedBackend(t)
	apis := b.startAPIs(t, 3, etcdEnv(servers.EtcdEndpoints(members), map[string]string{"LOCK_WAIT": "1s"}))
	s := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 300, thinkMS: 5})
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
