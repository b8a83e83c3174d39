//go:build linux

package chaos_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestZooKeeperQuorumLost is TestEtcdQuorumLost with the product locks in a ZooKeeper ensemble
// of the test's own (three members): mid-sale two members are killed (SIGKILL), so the one
// left stops serving and no lock can be granted. Every purchase sent then is answered 503
// unavailable with Retry-After, not busy (no one holds the lock: ZooKeeper is down) and not
// 500, and nothing is written for it. /readyz?full=1 answers 503 with its zookeeper check
// failing, and only that one; plain /readyz stays 200 and lists zookeeper unavailable (a shared
// backend, docs/deployment.md). Once one member is back (a quorum) the sale resumes, and once
// both are it sells out with the audit holding. The test logs how long after the quorum
// returned the first 201 came.
func TestZooKeeperQuorumLost(t *testing.T) {
	log := faultTest(t)
	members := servers.StartZooKeeper(t, 3)
	b, _ := sharedBackend(t)
	apis := b.startAPIs(t, 2, zkEnv(members, map[string]string{"LOCK_WAIT": "1s"}))
	s := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 150, thinkMS: 5})
	s.start(6, apis...)
	s.waitBought(t, 20)

	down := members[:2] // the leader among them or not: one member alone has no quorum
	for _, m := range down {
		m.Stop()
	}
	lost := time.Now()
	log("killed zookeeper members %d and %d: no quorum; %d orders so far", down[0].ID, down[1].ID, s.auditPG(t).Orders)
	// A batch that held the lock at that moment may still commit (201) or lose its lock
	// (busy) before its client hears the loss: those buyers were taken before it. Requests
	// sent from a moment later on, and answered before a member is started again, can only
	// find ZooKeeper down.
	since := lost.Add(250 * time.Millisecond)
	withoutQuorum := func(before time.Time) func(answer) bool {
		return func(a answer) bool { return !a.sent.Before(since) && a.done.Before(before) }
	}
	testenv.Eventually(t, 30*time.Second, "12 answers to purchases sent without quorum", func() bool {
		return total(s.countsOf(withoutQuorum(time.Now()))) >= 12
	})
	for _, p := range apis {
		var status int
		var r api.Readiness
		testenv.Eventually(t, 10*time.Second, p.Name+"'s /readyz?full=1 to show zookeeper down", func() bool {
			status, r = readiness(p)
			return r.Checks["zookeeper"] != api.StateOK
		})
		log("%s GET /readyz?full=1 without quorum: %d %v", p.Name, status, r.Checks)
		if status != http.StatusServiceUnavailable || r.Checks["zookeeper"] != api.StateUnavailable {
			t.Errorf("%s GET /readyz?full=1 without quorum = %d %v, want 503 with zookeeper %s", p.Name, status, r.Checks, api.StateUnavailable)
		}
		for name, state := range r.Checks {
			if name != "zookeeper" && state != api.StateOK {
				t.Errorf("%s GET /readyz?full=1 without quorum says %s is %s: only zookeeper is down", p.Name, name, state)
			}
		}
		// docs/deployment.md, "Readiness and the load balancer": /readyz is the process's own
		// readiness, 200 while a shared backend is down, listing it as the last check saw it.
		plain, body := p.Get("/readyz", "")
		var pr api.Readiness
		_ = json.Unmarshal(body, &pr)
		log("%s GET /readyz without quorum: %d %v", p.Name, plain, pr.Checks)
		if plain != http.StatusOK || pr.Checks["zookeeper"] != api.StateUnavailable {
			t.Errorf("%s GET /readyz without quorum = %d %v, want 200 listing zookeeper %s", p.Name, plain, pr.Checks, api.StateUnavailable)
		}
	}
	restarted := time.Now()
	outage := s.countsOf(withoutQuorum(restarted))
	log("answers to purchases sent without quorum (%v of it): %s; slowest %v",
		restarted.Sub(lost).Round(time.Millisecond), formatCounts(outage), s.slowest(since))
	for outcome, n := range outage {
		if outcome != outcomeUnavailable {
			t.Errorf("%d purchases sent without quorum answered %s, want %s", n, outcome, outcomeUnavailable)
		}
	}

	down[0].Start() // two of three: a quorum again; Start waits until the member serves
	back := time.Now()
	log("member %d is back and serving (%v after its start): quorum", down[0].ID, back.Sub(restarted).Round(time.Millisecond))
	s.waitBought(t, s.bought.Load()+10)
	first, ok := s.first201(func(a answer) bool { return !a.done.Before(restarted) })
	if !ok {
		t.Fatal("no 201 after the quorum returned")
	}
	log("first 201 after the quorum returned: %v after the member served, %v after its start (by %s)",
		first.done.Sub(back).Round(time.Millisecond), first.done.Sub(restarted).Round(time.Millisecond), first.target)
	log("answers from the restart on, by process and outcome: %s", formatCounts(s.countsBy(func(a answer) bool { return !a.sent.Before(restarted) },
		func(a answer) string { return a.target + " " + a.outcome() })))
	down[1].Start()
	s.finish(t, apis...)
	for _, p := range apis {
		testenv.Eventually(t, 10*time.Second, p.Name+" GET /readyz?full=1 200 with every member back", func() bool {
			status, _ := readiness(p)
			return status == http.StatusOK
		})
	}
	s.verify(t, apis[0], noneUnanswered)
}
