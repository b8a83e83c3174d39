//go:build linux

package chaos_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestRedlockMastersDown: two API processes take their product locks with Redlock over N
// independent redis-servers of the test's own (REDLOCK_ADDRS; the gate, the sold-out marks and
// the rate limits stay on the shared Redis), and mid-sale one master is killed (SIGKILL), then
// a second one is frozen (SIGSTOP) for 3 s (LOCK_TTL 500ms), then the frozen one resumes and the
// killed one comes back empty (no persistence), more than a lease later.
//
// With 5 masters, 3 are left: a majority, so the sale goes on through both faults. With 3,
// the first fault leaves a majority of 2 and the sale goes on; the second leaves 1 of 3, no
// majority: no lock can be had, so nothing is sold (buyers get 503 unavailable, or busy) until
// the frozen master resumes. Either way, what must hold does: no oversell, no buyer twice,
// every answer true, each committed write under a fence above the one before.
func TestRedlockMastersDown(t *testing.T) {
	faultTest(t)
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprintf("%d masters", n), func(t *testing.T) { testRedlockMastersDown(t, n) })
	}
}

func testRedlockMastersDown(t *testing.T, n int) {
	log := faultTest(t)
	masters := make([]*servers.Redis, n)
	for i := range masters {
		masters[i] = servers.StartRedis(t)
	}
	b, _ := sharedBackend(t)
	fences := newFenceLog(t, b.dsn)
	apps := newPGApps()
	apis := apps.start(t, b, map[string]string{
		"REDLOCK_ADDRS": strings.Join(servers.Addrs(masters), ","), "LOCK_TTL": "500ms", "LOCK_WAIT": "1s",
	}, "api1", "api2")
	s := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 600, thinkMS: 10})
	s.start(6, apis...)
	s.waitBought(t, 10)
	time.Sleep(time.Second) // a second of writes with every master up, to compare with

	killed, down := masters[0], masters[1]
	killed.Stop()
	killedAt := time.Now()
	log("master %s killed: %d of %d left", killed.Addr, n-1, n)
	s.waitBought(t, s.bought.Load()+10) // a majority is left: the sale goes on
	time.Sleep(time.Second)

	down.Pause()
	pausedAt := time.Now()
	log("master %s frozen: %d of %d answer, majority %d", down.Addr, n-2, n, n/2+1)
	time.Sleep(3 * time.Second) // the fault: six leases
	var readyErr error
	if n-2 <= n/2 { // no majority: the background check (every 2 s, 2 s bound) names redlock down
		for deadline := time.Now().Add(5 * time.Second); readyErr == nil && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if status, _ := readiness(apis[0]); status != http.StatusOK {
				readyErr = fmt.Errorf("GET /readyz?full=1 = %d", status)
			}
		}
	}
	down.Resume()
	resumedAt := time.Now()
	ws := fences.writes(t, s.id)
	// A lock held at the freeze may still commit until its safe deadline (a lease).
	settled := pausedAt.Add(500 * time.Millisecond)
	during := len(writesBetween(ws, settled, resumedAt))
	gap, _ := longestGap(ws, pausedAt, resumedAt)
	log("frozen %v: %d writes committed from a lease after the freeze to the resume, longest pause between writes %v; /readyz: %v",
		resumedAt.Sub(pausedAt).Round(time.Millisecond), during, gap.Round(time.Millisecond), readyErr)
	switch majority := n-2 > n/2; {
	case majority && during < 2: // slow: each try waits for the frozen master, and votes split more
		t.Errorf("%d of %d masters answer, a majority, but only %d writes were committed meanwhile", n-2, n, during)
	case !majority && during > 0:
		t.Errorf("%d of %d masters answer, no majority, but %d writes were committed meanwhile", n-2, n, during)
	case !majority && readyErr == nil:
		t.Errorf("/readyz?full=1 answered 200 with %d of %d masters up", n-2, n)
	}

	time.Sleep(time.Until(resumedAt.Add(500 * time.Millisecond))) // out for more than a lease, as docs/dlock.md asks
	killed.Start()
	log("master %s back, empty", killed.Addr)
	s.waitBought(t, s.bought.Load()+10)
	ws = fences.writes(t, s.id)
	if after := writesBetween(ws, resumedAt, time.Now()); len(after) > 0 {
		log("first write %v after the resume", after[0].at.Sub(resumedAt).Round(time.Millisecond))
	}
	log("writes/s: %.0f with %d masters, %.0f with %d, %.0f with %d; answers: %s",
		writeRate(ws, killedAt.Add(-time.Second), killedAt), n,
		writeRate(ws, killedAt.Add(200*time.Millisecond), pausedAt), n-1,
		writeRate(ws, settled, resumedAt), n-2, s.summary())

	s.finish(t, apis...)
	s.verify(t, apis[1], noneUnanswered)
	ws = fences.checkIncreasing(t, s.id)
	log("committed writes by process: %s", byApp(ws))
	noErrorsLogged(t, apis...)
}

// writesBetween returns the writes of ws committed in [from, to].
func writesBetween(ws []fenceWrite, from, to time.Time) []fenceWrite {
	var out []fenceWrite
	for _, w := range ws {
		if !w.at.Before(from) && !w.at.After(to) {
			out = append(out, w)
		}
	}
	return out
}

// writeRate is the writes of ws committed per second in [from, to].
func writeRate(ws []fenceWrite, from, to time.Time) float64 {
	return float64(len(writesBetween(ws, from, to))) / to.Sub(from).Seconds()
}
