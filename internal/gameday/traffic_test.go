//go:build linux

package gameday_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seckill/seckill/internal/api"
)

// buyTimeout bounds one purchase, client side: above what the API and HAProxy take to answer
// the worst purchase (PURCHASE_TIMEOUT, 10 s, then the settling of its COMMIT).
const buyTimeout = 30 * time.Second

// lbDetail begins the detail of every problem HAProxy answers itself (deploy/haproxy/haproxy.cfg).
const lbDetail = "the load balancer"

// attempt is one buyer's purchase through the load balancer: a new user, one request.
type attempt struct {
	User   int64
	Sent   time.Time // when the buyer began
	Wrote  bool      // the request reached a connection to HAProxy
	Done   time.Time // when its answer (or its error) came
	Status int       // 0: no answer
	Code   string    // the problem's code, if any
	Order  int64     // the order a 201 named
	LB     bool      // HAProxy's own problem, not an API's
	Err    string
}

// class names the attempt's kind of answer, as the table and the page count them.
func (a attempt) class() string {
	switch {
	case a.Status == 0 && !a.Wrote:
		return "refused" // no connection: nothing was sent
	case a.Status == 0:
		return "lost" // sent, and no answer came
	case a.Status == http.StatusCreated:
		return "201"
	case a.Status == http.StatusAccepted:
		return "202"
	case a.Status == http.StatusConflict:
		return "409"
	case a.LB:
		return "lb " + fmt.Sprint(a.Status)
	case a.Status == http.StatusServiceUnavailable:
		return "503 " + a.Code
	}
	return fmt.Sprintf("%d %s", a.Status, a.Code)
}

// served reports whether the answer is one a buyer of a working sale gets: bought, queued,
// or told the stock is gone.
func (a attempt) served() bool {
	return a.Status == http.StatusCreated || a.Status == http.StatusAccepted || a.Status == http.StatusConflict
}

// cell is one strategy's sale during one fault: a product of its own and every attempt.
type cell struct {
	Fault, Strategy string
	Product         int64
	Stock           int

	users   *atomic.Int64 // shared by every cell: user ids are never reused
	mu      sync.Mutex
	tries   []attempt
	retries []attempt   // each buyer's purchase sent again once the sale was over (retryAll)
	soldOut atomic.Bool // some buyer was answered sold_out
}

// attempts returns a copy of the attempts so far.
func (c *cell) attempts() []attempt {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tries)
}

// buyers sends buyers through the load balancer: rate new buyers a second for each cell,
// each in a goroutine of its own (64 in flight at most per cell), until stop.
type buyers struct {
	base   string
	client *http.Client
	wg     sync.WaitGroup
	cancel context.CancelFunc
}

func newBuyers(base string) *buyers {
	// A new connection per purchase: a refused connection then says that nothing was sent,
	// and no POST is ever written on a connection HAProxy is closing.
	tr := &http.Transport{DisableKeepAlives: true, MaxConnsPerHost: 0}
	return &buyers{base: base, client: &http.Client{Timeout: buyTimeout, Transport: tr}}
}

// start paces the cells' buyers until stop.
func (b *buyers) start(cells []*cell, rate float64) {
	ctx, cancel := context.WithCancel(context.Background())
	b.cancel = cancel
	for _, c := range cells {
		b.wg.Go(func() {
			sem := make(chan struct{}, 64)
			tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
			defer tick.Stop()
			var inner sync.WaitGroup
			defer inner.Wait()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				select {
				case sem <- struct{}{}:
				default:
					continue // 64 in flight: this buyer gives up before trying
				}
				inner.Go(func() {
					defer func() { <-sem }()
					b.buy(c)
				})
			}
		})
	}
}

// stop stops the pacing and waits for every purchase in flight.
func (b *buyers) stop() {
	if b.cancel != nil {
		b.cancel()
	}
	b.wg.Wait()
}

// burst sends n new buyers of c at once and waits for their answers.
func (b *buyers) burst(c *cell, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { b.buy(c) })
	}
	wg.Wait()
}

// buy sends one new buyer's purchase of c's product and records what came of it.
func (b *buyers) buy(c *cell) {
	a := b.send(c, c.users.Add(1))
	if a.Status == http.StatusConflict && a.Code == api.CodeSoldOut {
		c.soldOut.Store(true)
	}
	c.mu.Lock()
	c.tries = append(c.tries, a)
	c.mu.Unlock()
}

// send sends user's purchase of c's product through the load balancer and returns what came
// of it.
func (b *buyers) send(c *cell, user int64) attempt {
	a := attempt{User: user, Sent: time.Now()}
	var wrote atomic.Bool // set on the transport's goroutine
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		WroteHeaders: func() { wrote.Store(true) },
	})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("%s/api/v1/products/%d/purchase", b.base, c.Product),
		strings.NewReader(fmt.Sprintf(`{"user_id":%d}`, a.User)))
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	a.Done, a.Wrote = time.Now(), wrote.Load()
	if err != nil {
		a.Err = err.Error()
	} else {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		a.Status = resp.StatusCode
		switch {
		case a.Status == http.StatusCreated:
			var o api.Order
			_ = json.Unmarshal(body, &o)
			a.Order = o.ID
		case a.Status >= 400:
			var p api.Problem
			_ = json.Unmarshal(body, &p)
			a.Code, a.Order, a.LB = p.Code, p.OrderID, strings.HasPrefix(p.Detail, lbDetail)
		}
	}
	return a
}

// retryBudget bounds how long a retry answered 503 busy or unavailable is tried again.
const retryBudget = 45 * time.Second

// retryAll sends every buyer of c who reached the service its purchase again, once the sale
// is over, as a buyer who never saw an answer does, and keeps each one's last answer in
// c.retries (a 503 busy or unavailable is tried again each second within retryBudget).
func (b *buyers) retryAll(c *cell) {
	var users []int64
	for _, a := range c.attempts() {
		if a.Wrote {
			users = append(users, a.User)
		}
	}
	next := make(chan int64)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for u := range next {
				b.retry(c, u)
			}
		})
	}
	for _, u := range users {
		next <- u
	}
	close(next)
	wg.Wait()
}

func (b *buyers) retry(c *cell, user int64) {
	deadline := time.Now().Add(retryBudget)
	a := b.send(c, user)
	for a.Status == http.StatusServiceUnavailable && (a.Code == api.CodeBusy || a.Code == api.CodeUnavailable) && time.Now().Before(deadline) {
		time.Sleep(time.Second)
		a = b.send(c, user)
	}
	c.mu.Lock()
	c.retries = append(c.retries, a)
	c.mu.Unlock()
}
