//go:build linux

package chaos_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/testenv/contract"
)

// group is a set of workers buying through a fixed list of API processes.
type group struct {
	s         *sale
	targets   []*apiProc
	clients   []*client.Client // of targets, in order, all sending through hc
	hc        *http.Client
	timeout   time.Duration // one purchase, client side
	halted    atomic.Bool
	wg        sync.WaitGroup
	bought    atomic.Int64
	unwritten atomic.Int64 // requests started but not fully sent yet
	next      atomic.Uint64
}

// start runs workers buyers at once through targets (round-robin, keep-alive connections)
// until the product sells out, the group is stopped, or the sale's time is up.
func (s *sale) start(workers int, targets ...*apiProc) *group {
	return s.launch(workers, false, targets)
}

// startFresh is start with a new connection per request, so that a request is either
// accepted by the server or refused, never sent on a connection the server is closing.
func (s *sale) startFresh(workers int, targets ...*apiProc) *group {
	return s.launch(workers, true, targets)
}

func (s *sale) launch(workers int, fresh bool, targets []*apiProc) *group {
	return s.launchWith(workers, fresh, requestTimeout, targets)
}

// launchWith is launch with timeout for each purchase, client side.
func (s *sale) launchWith(workers int, fresh bool, timeout time.Duration, targets []*apiProc) *group {
	tr := &http.Transport{MaxIdleConnsPerHost: workers, DisableKeepAlives: fresh}
	g := &group{s: s, targets: targets, timeout: timeout, hc: &http.Client{Transport: contract.Transport(s.t, statusRecorder{tr})}}
	for _, p := range targets {
		g.clients = append(g.clients, client.New(p.Base, &client.Options{HTTPClient: g.hc}))
	}
	s.mu.Lock()
	s.groups = append(s.groups, g)
	s.mu.Unlock()
	g.wg.Add(workers)
	for range workers {
		go g.work()
	}
	return g
}

func (g *group) work() {
	defer g.wg.Done()
	defer g.hc.CloseIdleConnections()
	for !g.halted.Load() && !g.s.soldOut.Load() && g.s.ctx.Err() == nil && g.s.nextUser.Load() < maxUsers {
		i := int(g.next.Add(1) % uint64(len(g.targets)))
		switch a := g.buy(g.targets[i], g.clients[i]); {
		case a.status == http.StatusCreated, a.status == http.StatusConflict && a.code == api.CodeSoldOut:
		case a.code == api.CodeSaleNotStarted && g.s.startsAt != nil:
			time.Sleep(time.Until(*g.s.startsAt)) // as Retry-After says, to the instant
		default:
			time.Sleep(20 * time.Millisecond) // back off while something is broken or refused
		}
	}
}

// halt stops the group from sending new requests; those in flight go on.
func (g *group) halt() { g.halted.Store(true) }

// stop halts the group and waits for the answers of its requests in flight.
func (g *group) stop() {
	g.halt()
	g.wg.Wait()
}

// buy sends one purchase for a new user to p through c and records the answer: its status,
// and for a problem its code and Retry-After; status 0 when no answer could be read.
func (g *group) buy(p *apiProc, c *client.Client) answer {
	s := g.s
	a := answer{user: s.nextUser.Add(1), target: p.Name, sent: time.Now()}
	s.mu.Lock()
	s.inflight[a.user] = p.Name
	s.mu.Unlock()
	g.unwritten.Add(1)
	var written atomic.Bool
	sent := func() {
		if written.CompareAndSwap(false, true) {
			g.unwritten.Add(-1)
		}
	}
	ctx, cancel := context.WithTimeout(s.ctx, g.timeout)
	defer cancel()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { sent() }})
	var status int
	o, err := c.Purchase(context.WithValue(ctx, statusKey{}, &status), s.id, a.user)
	sent()
	var problem *api.Problem
	var accepted *client.AcceptedError
	switch {
	case err == nil:
		a.status, a.order = status, o.ID // 2xx, its order read
	case errors.As(err, &accepted): // queue strategy: queued, not written yet
		a.status = http.StatusAccepted
	case errors.As(err, &problem):
		a.status, a.code, a.retryAfter, a.order = problem.Status, problem.Code, problem.RetryAfter, problem.OrderID
		a.lb = strings.HasPrefix(problem.Detail, lbDetail)
	default:
		a.err = err
	}
	a.done = time.Now()
	g.record(a)
	return a
}

// statusKey is the context key of a purchase's *int where statusRecorder writes the status
// of its answer: the typed client tells it only for answers other than 2xx.
type statusKey struct{}

// statusRecorder is a transport that records the status of each answer whose request's
// context holds a statusKey.
type statusRecorder struct{ *http.Transport }

func (r statusRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.Transport.RoundTrip(req)
	if p, ok := req.Context().Value(statusKey{}).(*int); ok && err == nil {
		*p = resp.StatusCode
	}
	return resp, err
}

func (g *group) record(a answer) {
	s := g.s
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.inflight, a.user)
	s.answers = append(s.answers, a)
	switch {
	case a.status == http.StatusCreated, a.status == http.StatusAccepted: // 202: queued, its unit taken
		s.bought.Add(1)
		g.bought.Add(1)
	case a.status == http.StatusConflict && a.code == api.CodeSoldOut:
		s.soldOut.Store(true)
	}
}
