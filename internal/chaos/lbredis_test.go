//go:build linux

package chaos_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/contract"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// lbDetail begins the detail of every problem HAProxy answers itself (deploy/haproxy/haproxy.cfg).
const lbDetail = "the load balancer"

// TestRedisDownBehindHAProxy: two API processes behind HAProxy with the project's
// configuration, on the shared PostgreSQL and a redis-server of the test's own, which the test
// stops. Before and after the stop, through HAProxy: pessimistic and optimistic purchases are
// 201, the order lookup and the product read 200; the dlock, redis and queue purchases sell
// before and answer the API's own 503 unavailable with Retry-After after (not HAProxy's); every
// answer has an X-Request-ID (the client's when it sent one); HAProxy keeps both servers up
// throughout, since /readyz is each process's own readiness. A second HAProxy checking the
// old readiness (/readyz?full=1, which fails with Redis) takes both out and answers its own
// 503: the negative control. Last, with every API stopped, HAProxy's own 503 is a problem
// (unavailable, Retry-After, X-Request-ID, its request_id). Every answer is checked against
// the API's description.
func TestRedisDownBehindHAProxy(t *testing.T) {
	log := faultTest(t)
	servers.HAProxyBin(t)
	b, red := ownRedis(t)
	apis := b.startAPIs(t, 2, nil)
	backends := []string{strings.TrimPrefix(apis[0].Base, "http://"), strings.TrimPrefix(apis[1].Base, "http://")}
	h := servers.StartHAProxy(t, backends, nil)
	old := servers.StartHAProxy(t, backends, map[string]string{"LB_CHECK_URI": "/readyz?full=1"})
	c := &lbClient{t: t, http: contract.Client(t, &http.Client{Timeout: 10 * time.Second})}
	ids := map[string]int64{}
	for _, s := range []string{"pessimistic", "optimistic", "dlock", "redis", "queue"} {
		ids[s] = newSale(t, apis[0], b.dsn, product{strategy: s, stock: 100}).id
	}

	// probe sends each kind of request through base twice (HAProxy alternates the servers)
	// and checks its answer; redisUp says what the Redis strategies answer.
	probe := func(base, phase string, redisUp bool) {
		t.Helper()
		for range 2 {
			user := c.nextUser()
			for _, s := range []string{"pessimistic", "optimistic"} {
				if a := c.do(base, "POST", fmt.Sprintf("/api/v1/products/%d/purchase", ids[s]), fmt.Sprintf(`{"user_id":%d}`, user)); a.status != http.StatusCreated {
					t.Errorf("%s: %s purchase = %s, want 201", phase, s, a)
				}
			}
			if a := c.do(base, "GET", fmt.Sprintf("/api/v1/products/%d/orders/%d", ids["pessimistic"], user), ""); a.status != http.StatusOK {
				t.Errorf("%s: order lookup = %s, want 200", phase, a)
			}
			if a := c.do(base, "GET", fmt.Sprintf("/api/v1/products/%d", ids["optimistic"]), ""); a.status != http.StatusOK {
				t.Errorf("%s: product read = %s, want 200", phase, a)
			}
			for _, s := range []string{"dlock", "redis", "queue"} {
				a := c.do(base, "POST", fmt.Sprintf("/api/v1/products/%d/purchase", ids[s]), fmt.Sprintf(`{"user_id":%d}`, user))
				switch {
				case redisUp && a.status != http.StatusCreated && a.status != http.StatusAccepted:
					t.Errorf("%s: %s purchase = %s, want 201 (202 queue)", phase, s, a)
				case !redisUp && (a.status != http.StatusServiceUnavailable || a.problem.Code != api.CodeUnavailable ||
					a.retryAfter == "" || strings.HasPrefix(a.problem.Detail, lbDetail)):
					t.Errorf("%s: %s purchase = %s, want the API's 503 unavailable with Retry-After", phase, s, a)
				}
			}
		}
	}
	probe(h.Base, "Redis up", true)

	red.Stop()
	stopped := time.Now()
	for _, p := range apis {
		testenv.Eventually(t, 10*time.Second, p.Name+" seckill_backend_up{backend=\"redis\"} 0", func() bool {
			return p.Metric("seckill_backend_up", `backend="redis"`) == 0 && p.Metric("seckill_backend_up", `backend="postgres"`) == 1
		})
	}
	log("Redis stopped; both processes' checkers saw it %v later", time.Since(stopped).Round(time.Millisecond))
	// The old readiness takes both servers out: the behaviour this test must tell apart.
	old.WaitState(10*time.Second, "DOWN", "api1", "api2")
	if a := c.do(old.Base, "POST", fmt.Sprintf("/api/v1/products/%d/purchase", ids["pessimistic"]), `{"user_id":1}`); a.status != http.StatusServiceUnavailable || !strings.HasPrefix(a.problem.Detail, lbDetail) {
		t.Errorf("negative control: a pessimistic purchase through HAProxy checking /readyz?full=1 = %s, want its own 503", a)
	}
	log("negative control: HAProxy checking /readyz?full=1 took both servers out %v after the stop", time.Since(stopped).Round(time.Millisecond))
	// Well past what takes a server out (2 failed checks a second apart): both must be in.
	time.Sleep(3 * time.Second)
	probe(h.Base, "Redis down", false)
	if st := h.States(); st["api1"] != "UP" || st["api2"] != "UP" {
		t.Errorf("HAProxy's servers with Redis down: %v, want both UP", st)
	}
	served := map[string]bool{}
	for _, p := range apis {
		if p.Metric("seckill_http_requests_total", `route="/api/v1/products/:id/purchase"`) > 0 {
			served[p.Name] = true
		}
	}
	if len(served) != 2 {
		t.Errorf("purchases served by %v, want both processes", served)
	}

	for _, p := range apis {
		p.Stop()
	}
	h.WaitState(10*time.Second, "DOWN", "api1", "api2")
	for _, id := range []string{"client-id-42", ""} {
		c.id = id
		a := c.do(h.Base, "POST", fmt.Sprintf("/api/v1/products/%d/purchase", ids["pessimistic"]), `{"user_id":1}`)
		if a.status != http.StatusServiceUnavailable || a.problem.Code != api.CodeUnavailable || a.retryAfter == "" ||
			!strings.HasPrefix(a.problem.Detail, lbDetail) || a.contentType != api.ContentTypeProblem {
			t.Errorf("no API up: purchase through HAProxy = %s (%s), want its own 503 unavailable problem with Retry-After", a, a.contentType)
		}
	}
	log("answers through HAProxy: %d, each with its X-Request-ID", c.sent.Load())
}

// lbClient sends requests through a load balancer and checks that every answer has an
// X-Request-ID: the one sent (id, or a fresh one when id is empty: the balancer's own), the
// same as the problem's request_id.
type lbClient struct {
	t     *testing.T
	http  *http.Client
	id    string // the X-Request-ID to send; "": a fresh one per request
	token string // the admin bearer token to send; "": none
	users atomic.Int64
	sent  atomic.Int64
}

func (c *lbClient) nextUser() int64 { return 1000 + c.users.Add(1) }

// lbAnswer is one answer: its status, problem (if any) and headers.
type lbAnswer struct {
	status      int
	problem     api.Problem
	retryAfter  string
	contentType string
	body        string
}

func (a lbAnswer) String() string { return fmt.Sprintf("%d %s", a.status, a.body) }

func (c *lbClient) do(base, method, path, body string) lbAnswer {
	c.t.Helper()
	n := c.sent.Add(1)
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	sentID := c.id
	if n%2 == 0 && sentID == "" {
		sentID = fmt.Sprintf("lb-test-%d", n) // half the requests name their own id
	}
	if sentID != "" {
		req.Header.Set("X-Request-ID", sentID)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := lbAnswer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"),
		contentType: resp.Header.Get("Content-Type"), body: string(b)}
	if a.status >= 400 {
		_ = json.Unmarshal(b, &a.problem)
	}
	got := resp.Header.Get("X-Request-ID")
	switch {
	case got == "":
		c.t.Errorf("%s %s = %s: no X-Request-ID", method, path, a)
	case sentID != "" && got != sentID:
		c.t.Errorf("%s %s: X-Request-ID %q, want the one sent, %q", method, path, got, sentID)
	case a.status >= 400 && a.problem.RequestID != got:
		c.t.Errorf("%s %s = %s: request_id is not the X-Request-ID %q", method, path, a, got)
	}
	return a
}
