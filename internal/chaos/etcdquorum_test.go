//go:build linux

package chaos_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/testenv"
)

// TestEtcdQuorumLost: the product locks of two API processes live in an etcd cluster of the
// test's own (three members); mid-sale two members are killed (SIGKILL), so etcd can neither
// grant a lock nor serve a read. Every purchase sent then is answered 503 unavailable with
// Retry-After, not busy (the lock is not held by anyone: etcd is down) and not 500, and
// nothing is written for it; /readyz answers 503 with its etcd check failing, and only that
// one (PostgreSQL and Redis are up). Once one member
// is back (two of three: a quorum) the sale resumes, and once both are it sells out with the
// audit holding. The test logs how long after the quorum returned the first 201 came.
func TestEtcdQuorumLost(t *testing.T) {
	log := faultTest(t)
	members, apis, s := etcdClusterSale(t, 2, 150)
	s.start(6, apis...)
	s.waitBought(t, 20)

	down := members[:2] // the leader among them or not: one member alone has no quorum
	for _, m := range down {
		m.Stop()
	}
	lost := time.Now()
	log("killed etcd members %s and %s: no quorum; %d orders so far", down[0].Name, down[1].Name, s.auditPG(t).Orders)
	// A batch that held the lock at that moment may still commit (201) or lose its lock
	// (busy), within its lease: those buyers were taken before the loss. Requests sent from a
	// moment later on, and answered before a member is started again, can only find etcd down.
	since := lost.Add(250 * time.Millisecond)
	withoutQuorum := func(before time.Time) func(answer) bool {
		return func(a answer) bool { return !a.sent.Before(since) && a.done.Before(before) }
	}
	testenv.Eventually(t, 30*time.Second, "12 answers to purchases sent without quorum", func() bool {
		return total(s.countsOf(withoutQuorum(time.Now()))) >= 12
	})
	for _, p := range apis {
		// /readyz?full=1 tells each backend's last check (every 2 s, each bounded by 2 s): etcd
		// shows down within 4 s of the loss.
		var status int
		var r api.Readiness
		testenv.Eventually(t, 10*time.Second, p.Name+"'s /readyz?full=1 to show etcd down", func() bool {
			status, r = readiness(p)
			return r.Checks["etcd"] != api.StateOK
		})
		log("%s GET /readyz without quorum: %d %v", p.Name, status, r.Checks)
		if status != http.StatusServiceUnavailable || r.Checks["etcd"] != api.StateUnavailable {
			t.Errorf("%s GET /readyz without quorum = %d %v, want 503 with etcd %s", p.Name, status, r.Checks, api.StateUnavailable)
		}
		for name, state := range r.Checks {
			if name != "etcd" && state != api.StateOK {
				t.Errorf("%s GET /readyz without quorum says %s is %s: only etcd is down", p.Name, name, state)
			}
		}
	}
	restarted := time.Now()
	outage := s.countsOf(withoutQuorum(restarted))
	log("answers to purchases sent without quorum: %s; slowest %v", formatCounts(outage), s.slowest(since))
	for outcome, n := range outage {
		if outcome != outcomeUnavailable {
			t.Errorf("%d purchases sent without quorum answered %s, want %s", n, outcome, outcomeUnavailable)
		}
	}

	down[0].Start() // two of three: a quorum again; Start waits until the member is healthy
	back := time.Now()
	log("%s is back and healthy (%v after its start): quorum", down[0].Name, back.Sub(restarted).Round(time.Millisecond))
	s.waitBought(t, s.bought.Load()+10)
	first, ok := s.first201(func(a answer) bool { return !a.done.Before(restarted) })
	if !ok {
		t.Fatal("no 201 after the quorum returned")
	}
	log("first 201 after the quorum returned: %v after the member was healthy, %v after its start (by %s)",
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

// total is the number of answers counted in n.
func total(n map[string]int) int {
	sum := 0
	for _, c := range n {
		sum += c
	}
	return sum
}
