//go:build linux

package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// group is a set of workers buying through a fixed list of API processes.
type group struct {
	s         *sale
	targets   []*apiProc
	client    *http.Client
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
	tr := &http.Transport{MaxIdleConnsPerHost: workers, DisableKeepAlives: fresh}
	g := &group{s: s, targets: targets, client: &http.Client{Transport: tr}}
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
	defer g.client.CloseIdleConnections()
	for !g.halted.Load() && !g.s.soldOut.Load() && g.s.ctx.Err() == nil && g.s.nextUser.Load() < maxUsers {
		p := g.targets[int(g.next.Add(1)%uint64(len(g.targets)))]
		if a := g.buy(p); a.status != http.StatusCreated && a.status != http.StatusConflict {
			time.Sleep(20 * time.Millisecond) // back off while something is broken
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

// buy sends one purchase for a new user to p and records the answer.
func (g *group) buy(p *apiProc) answer {
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
	ctx, cancel := context.WithTimeout(s.ctx, requestTimeout)
	defer cancel()
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { sent() }})
	url := fmt.Sprintf("%s/api/v1/products/%d/purchase", p.Base, s.id)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(fmt.Sprintf(`{"user_id":%d}`, a.user)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := g.client.Do(req)
	sent()
	if err != nil {
		a.err = err
	} else {
		a.status, a.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
		var problem struct{ Code string }
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			a.status, a.err = 0, err
		} else if resp.StatusCode != http.StatusCreated && json.Unmarshal(b, &problem) == nil {
			a.code = problem.Code
		}
	}
	a.done = time.Now()
	g.record(a)
	return a
}

func (g *group) record(a answer) {
	s := g.s
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.inflight, a.user)
	s.answers = append(s.answers, a)
	switch {
	case a.status == http.StatusCreated:
		s.bought.Add(1)
		g.bought.Add(1)
	case a.status == http.StatusConflict && a.code == "sold_out":
		s.soldOut.Store(true)
	}
}
