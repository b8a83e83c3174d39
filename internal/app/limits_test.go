package app_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/httpapi"
	"github.com/seckill/seckill/internal/testenv"
)

// limitedStack serves an API process with rate limits on its own schema and Redis prefix.
func limitedStack(t testing.TB, limits httpapi.RateLimits) *stack {
	t.Helper()
	gdb := testenv.Postgres(t)
	rdb, prefix := testenv.Redis(t)
	t.Cleanup(func() { // redis_rate's keys are rate:<prefix>:..., outside testenv's sweep
		ctx := context.Background()
		for iter := rdb.Scan(ctx, 0, "rate:"+prefix+":*", 100).Iterator(); iter.Next(ctx); {
			rdb.Del(ctx, iter.Val())
		}
	})
	return serve(t, app.Config{DB: gdb, Redis: rdb, RedisPrefix: prefix, AdminToken: adminToken, RateLimits: limits})
}

// buy purchases through the typed client and checks the answer's status and code; on 429
// it checks the problem (the client takes a code only from an application/problem+json
// body) and a Retry-After of whole seconds, at least 1.
func buy(t *testing.T, s *stack, product, user int64, wantStatus int, wantCode string) {
	t.Helper()
	_, err := s.API.Purchase(context.Background(), product, user)
	status, code, terr := answerOf(err, http.StatusCreated)
	if terr != nil {
		t.Fatal(terr)
	}
	if status != wantStatus || code != wantCode {
		t.Fatalf("purchase of %d by %d = %d %q, want %d %q (%v)", product, user, status, code, wantStatus, wantCode, err)
	}
	var p *api.Problem
	if status != http.StatusTooManyRequests || !errors.As(err, &p) {
		return
	}
	if p.Type == "" {
		t.Errorf("429 problem %+v: want a type", p)
	}
	if secs, err := strconv.Atoi(p.RetryAfter); err != nil || secs < 1 {
		t.Errorf("Retry-After = %q, want whole seconds >= 1", p.RetryAfter)
	}
}

func TestRateLimitPerUser(t *testing.T) {
	t.Parallel()
	s := limitedStack(t, httpapi.RateLimits{User: httpapi.Rate{N: 3, Per: time.Hour}})
	p := s.createProduct(t, 100, "optimistic", 0)
	other := s.createProduct(t, 100, "optimistic", 0)
	for _, body := range []string{`{"user_id":0}`, `{"user_id":7,"x":1}`, `not json`, `{"user_id":7} {}`} {
		s.do(http.MethodPost, fmt.Sprintf("/api/v1/products/%d/purchase", p.ID), "", body) // invalid: not counted
	}
	buy(t, s, p.ID, 7, 201, "")
	buy(t, s, p.ID, 7, 409, api.CodeAlreadyPurchased)
	buy(t, s, p.ID, 7, 409, api.CodeAlreadyPurchased)
	buy(t, s, p.ID, 7, 429, api.CodeRateLimited)
	buy(t, s, p.ID, 8, 201, "")     // another user has a budget of their own
	buy(t, s, other.ID, 7, 201, "") // and so has the same user on another product
	_, _, metrics, _, err := s.do(http.MethodGet, "/metrics", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := `seckill_rate_limited_total{scope="user"} 1`; !strings.Contains(string(metrics), want) {
		t.Errorf("/metrics lacks %s", want)
	}
}

func TestRateLimitPerAddress(t *testing.T) {
	t.Parallel()
	s := limitedStack(t, httpapi.RateLimits{Addr: httpapi.Rate{N: 2, Per: time.Hour}})
	p := s.createProduct(t, 100, "optimistic", 0)
	buy(t, s, p.ID, 1, 201, "")
	buy(t, s, p.ID, 2, 201, "")
	buy(t, s, p.ID, 3, 429, api.CodeRateLimited) // every user id, one address
	// The address is the TCP peer: headers a client writes do not change it.
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/v1/products/%d/purchase", s.URL, p.ID),
		strings.NewReader(`{"user_id":4}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Forwarded-For", "198.51.100.7")
	req.Header.Set("X-Real-IP", "198.51.100.7")
	resp, err := s.HTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("purchase with a forged X-Forwarded-For = %d, want 429", resp.StatusCode)
	}
}

// TestRateLimitPerIPv6Net: IPv6 clients share the address budget of their /64, IPv4
// clients have one each, however their address is written. The requests are served in
// memory with the TCP peer address the server would see (no proxy is trusted, so gin's
// ClientIP is RemoteAddr's host).
func TestRateLimitPerIPv6Net(t *testing.T) {
	t.Parallel()
	s := limitedStack(t, httpapi.RateLimits{Addr: httpapi.Rate{N: 2, Per: time.Hour}})
	p := s.createProduct(t, 100, "optimistic", 0)
	path := fmt.Sprintf("/api/v1/products/%d/purchase", p.ID)
	for i, tt := range []struct {
		from string
		want int
	}{
		{"[2001:db8:1:2::1]:40000", http.StatusCreated},
		{"[2001:db8:1:2:a:b:c:d]:40001", http.StatusCreated},
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:40002", http.StatusTooManyRequests}, // same /64
		{"[2001:db8:1:3::1]:40003", http.StatusCreated},                          // the next /64
		{"[2001:db8:1:3::2]:40004", http.StatusCreated},
		{"[2001:db8:1:3::3]:40005", http.StatusTooManyRequests},
		{"192.0.2.7:40006", http.StatusCreated},
		{"[::ffff:192.0.2.7]:40007", http.StatusCreated}, // the same IPv4 client, IPv4-mapped
		{"192.0.2.7:40008", http.StatusTooManyRequests},
		{"192.0.2.8:40009", http.StatusCreated}, // IPv4 neighbours do not share
	} {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(fmt.Sprintf(`{"user_id":%d}`, i+1)))
		req.RemoteAddr = tt.from
		w := httptest.NewRecorder()
		s.App.Handler.ServeHTTP(w, req)
		if w.Code != tt.want {
			t.Errorf("purchase from %s = %d %s, want %d", tt.from, w.Code, w.Body, tt.want)
		}
	}
}

// TestRateLimitSharedByProcesses: two API processes on one Redis and prefix share a budget.
func TestRateLimitSharedByProcesses(t *testing.T) {
	t.Parallel()
	limits := httpapi.RateLimits{User: httpapi.Rate{N: 2, Per: time.Hour}}
	first := limitedStack(t, limits)
	second := serve(t, app.Config{DB: first.DB, Redis: first.Redis, RedisPrefix: first.Prefix, RateLimits: limits})
	p := first.createProduct(t, 100, "optimistic", 0)
	buy(t, first, p.ID, 5, 201, "")
	buy(t, second, p.ID, 5, 409, api.CodeAlreadyPurchased)
	buy(t, first, p.ID, 5, 429, api.CodeRateLimited)
	buy(t, second, p.ID, 5, 429, api.CodeRateLimited)
}

// TestRateLimitSkipsSoldOut: once a product is known to be sold out, its answer (which
// costs less than the limit check) is not rate limited.
func TestRateLimitSkipsSoldOut(t *testing.T) {
	t.Parallel()
	s := limitedStack(t, httpapi.RateLimits{User: httpapi.Rate{N: 1, Per: time.Hour}})
	p := s.createProduct(t, 1, "optimistic", 0)
	buy(t, s, p.ID, 1, 201, "")
	for range 3 {
		buy(t, s, p.ID, 2, 409, api.CodeSoldOut)
	}
}

// BenchmarkSoldOutHTTPRateLimited is BenchmarkSoldOutHTTP with the per-user limit on: the
// limiter's cost on the path most of a crowd takes (it skips products known sold out).
func BenchmarkSoldOutHTTPRateLimited(b *testing.B) {
	s := limitedStack(b, httpapi.RateLimits{User: httpapi.Rate{N: 1_000_000, Per: time.Second}})
	benchSoldOut(b, s.App.Handler, soldOutPath(b, s))
}

// TestRateLimitBundle: a bundle is one request from its address, whatever the products it
// names, and spends the user's budget of each product as a purchase of it would. With 3
// requests per address and 1 attempt per user and product: two bundles of three products pass
// (each product charged to the address would have refused the second), the same user's next
// bundle is refused by its per-user budget, and a fresh user's by the address's, now spent.
func TestRateLimitBundle(t *testing.T) {
	t.Parallel()
	s := limitedStack(t, httpapi.RateLimits{Addr: httpapi.Rate{N: 3, Per: time.Hour}, User: httpapi.Rate{N: 1, Per: time.Hour}})
	a, b, c := s.createProduct(t, 10, "dlock", 0), s.createProduct(t, 10, "dlock", 0), s.createProduct(t, 10, "dlock", 0)
	ctx := context.Background()
	for user := int64(1); user <= 2; user++ {
		if _, err := s.API.PurchaseBundle(ctx, user, a.ID, b.ID, c.ID); err != nil {
			t.Fatalf("bundle of user %d, 3 products, 3 requests per address: %v", user, err)
		}
	}
	for _, user := range []int64{1, 4} { // 1: its budget of a is spent; 4: the address's
		_, err := s.API.PurchaseBundle(ctx, user, a.ID)
		if status, code, _ := answerOf(err, http.StatusCreated); status != http.StatusTooManyRequests || code != api.CodeRateLimited {
			t.Errorf("bundle of user %d = %d %q, want 429 rate_limited", user, status, code)
		}
	}
}
