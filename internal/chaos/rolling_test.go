//go:build linux

package chaos_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/launch"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestRollingRestartBehindHAProxy: three API processes behind HAProxy with the project's
// configuration (deploy/haproxy/haproxy.cfg), a sale through HAProxy with buyers coming in
// waves until well past the sell-out, and mid-sale each API process in turn gets SIGTERM, is
// waited for, and is started again on its address (SHUTDOWN_DELAY 5 s: /readyz answers 503
// while it still serves). HAProxy takes each one out before its listener closes and puts it
// back once it is ready; every request gets a sale's answer (201, 409 sold_out, or the API's
// own 503 busy/unavailable with Retry-After), never one of HAProxy's, and the sale passes
// every check of verify.
func TestRollingRestartBehindHAProxy(t *testing.T) {
	log := faultTest(t)
	servers.HAProxyBin(t)
	r := rollingSale(t, log, map[string]string{"SHUTDOWN_DELAY": "5s"}, nil)
	for i := range r.apis {
		r.restart(t, i, true)
	}
	r.sellOut(t)
	if bad := r.failed(); len(bad) > 0 {
		t.Errorf("%d requests through HAProxy failed, first: %s", len(bad), bad[0])
	}
	// HAProxy logs only the requests that went wrong or were tried again (dontlog-normal):
	// with the drain, no connection to a closed listener was tried, so none should be there.
	t.Logf("HAProxy logged %d requests (each one that failed or was tried again)", r.loggedRequests())
	noErrorsLogged(t, r.apis...)
	r.s.verify(t, r.lb, noneUnanswered)
}

// TestRollingRestartWithoutDrainFails is TestRollingRestartBehindHAProxy's negative control:
// the same rolling restart with SHUTDOWN_DELAY 0 (an API closes its listener at SIGTERM,
// while HAProxy still counts it up) and HAProxy's retries off. Requests sent to the process
// that is gone fail, and the check of TestRollingRestartBehindHAProxy must see them.
func TestRollingRestartWithoutDrainFails(t *testing.T) {
	log := faultTest(t)
	servers.HAProxyBin(t)
	r := rollingSale(t, log, map[string]string{"SHUTDOWN_DELAY": "0s"}, map[string]string{"LB_RETRIES": "0"})
	for i := range r.apis {
		r.restart(t, i, false)
	}
	r.sellOut(t)
	bad := r.failed()
	if len(bad) == 0 {
		t.Fatalf("no request failed without the drain: the check of TestRollingRestartBehindHAProxy proves nothing (answers %s)", r.s.summary())
	}
	t.Logf("as expected, %d requests failed without the drain, first: %s; answers %s", len(bad), bad[0], r.s.summary())
}

// rolling is a sale through HAProxy in front of three API processes, with a stream of
// buyers that goes on until stopped.
type rolling struct {
	s    *sale
	apis []*apiProc
	h    *servers.HAProxy
	lb   *apiProc // HAProxy, as the sale's target
	log  func(string, ...any)
	stop func()
}

// rollingSale starts three API processes with apiEnv, HAProxy in front of them with lbEnv,
// a dlock product and buyers through HAProxy (see keepBuying), and waits until some sold.
func rollingSale(t *testing.T, log func(string, ...any), apiEnv, lbEnv map[string]string) *rolling {
	t.Helper()
	b, _ := sharedBackend(t)
	apis := b.startAPIs(t, 3, apiEnv)
	backends := make([]string, len(apis))
	for i, p := range apis {
		backends[i] = strings.TrimPrefix(p.Base, "http://")
	}
	h := servers.StartHAProxy(t, backends, lbEnv)
	lb := &apiProc{API: &launch.API{Name: "haproxy", Base: h.Base, Log: h.Log}}
	s := newSale(t, lb, b.dsn, product{strategy: "dlock", stock: 800, thinkMS: 30})
	if apiEnv["SHUTDOWN_DELAY"] == "0s" {
		// A connection HAProxy closes unanswered is no answer the description has: the
		// negative control expects those, so they are logged instead of failing it.
		s.t = contractLogged{t}
	}
	r := &rolling{s: s, apis: apis, h: h, lb: lb, log: log}
	r.stop = r.keepBuying()
	t.Cleanup(r.stop)
	s.waitBought(t, 20)
	log("HAProxy on %s in front of %v; %d sold", h.Addr, backends, s.bought.Load())
	return r
}

// keepBuying sends buyers through HAProxy in waves of 12 workers until the returned stop is
// called: a wave ends at the sell-out (each worker's first sold_out), and the next starts
// 50 ms later, so that sold-out answers keep coming too. maxUsers bounds them all.
func (r *rolling) keepBuying() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			r.s.soldOut.Store(false)
			r.s.start(12, r.lb).wg.Wait()
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			r.s.stopAll()
			wg.Wait()
			r.s.stopAll()
		})
	}
}

// restart gives API process i SIGTERM, waits for it to exit, starts it again on its address
// and waits until HAProxy counts it up. With drained, HAProxy must take it out while it
// still serves (during SHUTDOWN_DELAY).
func (r *rolling) restart(t *testing.T, i int, drained bool) {
	t.Helper()
	p, name := r.apis[i], fmt.Sprintf("api%d", i+1)
	p.Signal(syscall.SIGTERM)
	sigterm := time.Now()
	if drained {
		r.h.WaitState(5*time.Second, "DOWN", name)
		if p.Exited() {
			t.Fatalf("%s exited before HAProxy took it out", p.Name)
		}
		r.log("%s: SIGTERM; HAProxy took it out %v later, while it still served", p.Name, time.Since(sigterm).Round(time.Millisecond))
	}
	if !p.Wait(20 * time.Second) {
		t.Fatalf("%s still running 20s after SIGTERM", p.Name)
	}
	if p.Err() != nil {
		t.Errorf("%s exited with %v after SIGTERM, want 0", p.Name, p.Err())
	}
	r.log("%s exited %v after SIGTERM; %d sold so far", p.Name, time.Since(sigterm).Round(time.Millisecond), r.s.bought.Load())
	p.Restart()
	p.WaitReady("/readyz")
	r.h.WaitState(10*time.Second, "UP", name)
	r.log("%s started again on %s, and HAProxy counts it up", p.Name, p.Base)
}

// sellOut waits (30 s at most) until the stream of buyers has sold the product out, then
// stops it.
func (r *rolling) sellOut(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for r.s.pgStock(t) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	r.stop()
	r.log("buyers stopped: %d answers, %s", len(r.s.answersSnapshot()), r.s.summary())
}

// loggedRequests is how many requests HAProxy logged.
func (r *rolling) loggedRequests() int {
	return strings.Count(r.h.Log.String(), ` HTTP/1.1"`)
}

// failed returns the answers that are no sale's answer: no answer at all, or a status
// but 201, 409 sold_out, or 503 busy/unavailable (the API's, with Retry-After). HAProxy's own
// 502, 503 and 504 are problems too, told apart by their detail (answer.lb).
func (r *rolling) failed() []string {
	var bad []string
	for _, a := range r.s.answersSnapshot() {
		switch {
		case a.status == http.StatusCreated:
		case a.status == http.StatusConflict && a.code == api.CodeSoldOut:
		case a.status == http.StatusServiceUnavailable && (a.code == api.CodeBusy || a.code == api.CodeUnavailable) && a.retryAfter != "" && !a.lb:
		default:
			bad = append(bad, fmt.Sprintf("user %d: %s (%v)", a.user, a.outcome(), a.err))
		}
	}
	return bad
}

// contractLogged is a test whose Errorf only logs: the API contract's checks report to it.
type contractLogged struct{ testing.TB }

func (c contractLogged) Errorf(format string, args ...any) { c.Logf("(expected) "+format, args...) }
