package app_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/order"
)

// TestPauseLosesNothingInFlight: buyers over real HTTP, on two API processes, while the sale
// is paused through one and resumed through the other: purchases past the check finish, the
// others are answered 409 sale_paused with Retry-After and buy once resumed; afterwards every
// 201 is an order and every order a 201 (orders == sold, from the database).
func TestPauseLosesNothingInFlight(t *testing.T) {
	for _, strategy := range []string{"dlock", "redis"} {
		t.Run(strategy, func(t *testing.T) {
			s1 := newStack(t, order.Config{})
			s2 := newStackOn(t, s1.DB, s1.Redis, s1.Prefix, order.Config{})
			const stock, buyers = 60, 80
			p := s1.createProduct(t, stock, strategy, 5) // 5 ms of think: purchases are in flight at the pause
			var (
				mu      sync.Mutex
				created = map[int64]bool{}
				paused  int
				wg      sync.WaitGroup
			)
			deadline := time.Now().Add(20 * time.Second)
			for i := range buyers {
				wg.Go(func() {
					user := int64(i + 1)
					s := []*stack{s1, s2}[i%2]
					time.Sleep(time.Duration(i) * 20 * time.Millisecond) // arrivals over 1.6 s
					for time.Now().Before(deadline) {
						status, code, err := s.purchase(p.ID, user)
						if err != nil {
							t.Errorf("user %d: %v", user, err)
							return
						}
						mu.Lock()
						switch {
						case status == http.StatusCreated:
							created[user] = true
						case code == api.CodeSalePaused:
							paused++
						}
						mu.Unlock()
						if code != api.CodeSalePaused && code != api.CodeBusy {
							return // bought or sold out: done
						}
						time.Sleep(20 * time.Millisecond) // a test's Retry-After
					}
					t.Errorf("user %d still refused at the deadline", user)
				})
			}
			time.Sleep(300 * time.Millisecond) // a sale under way: some 15 buyers came
			if _, err := s1.API.Pause(context.Background(), p.ID); err != nil {
				t.Fatal(err)
			}
			status, code, _, h, err := s2.do(http.MethodPost, fmt.Sprintf("/api/v1/products/%d/purchase", p.ID), "",
				`{"user_id": 100000}`)
			for start := time.Now(); err == nil && code != api.CodeSalePaused && time.Since(start) < 2*time.Second; {
				time.Sleep(20 * time.Millisecond) // within the lease
				status, code, _, h, err = s2.do(http.MethodPost, fmt.Sprintf("/api/v1/products/%d/purchase", p.ID), "",
					fmt.Sprintf(`{"user_id": %d}`, 100001+time.Now().UnixNano()%100000))
			}
			if err != nil || status != http.StatusConflict || code != api.CodeSalePaused || h.Get("Retry-After") != "5" {
				t.Fatalf("a purchase while paused: %d %s (Retry-After %q), %v", status, code, h.Get("Retry-After"), err)
			}
			time.Sleep(500 * time.Millisecond)
			if _, err := s2.API.Resume(context.Background(), p.ID); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			a := s1.audit(t, p.ID)
			var inDB []int64
			if err := s1.DB.Raw(`SELECT user_id FROM orders WHERE product_id = ? AND user_id <= ?`, p.ID, buyers).Scan(&inDB).Error; err != nil {
				t.Fatal(err)
			}
			for _, u := range inDB {
				if !created[u] {
					t.Errorf("user %d has an order and was never answered 201", u)
				}
			}
			if len(inDB) != len(created) || a.Orders != a.Sold || !a.Consistent || a.Stock != 0 {
				t.Fatalf("201s %d, their orders %d, audit %+v", len(created), len(inDB), a)
			}
			if paused == 0 {
				t.Fatal("negative control: no buyer was ever answered sale_paused: the pause did not happen mid-sale")
			}
			t.Logf("%d bought, %d answers sale_paused on the way", len(created), paused)
		})
	}
}

// TestControlsOverHTTP: the admin routes' answers, each checked against the description:
// restock by body key and by Idempotency-Key, its replay and its conflict, its refusals, an
// early end, and the metrics they count.
func TestControlsOverHTTP(t *testing.T) {
	s := newStack(t, order.Config{})
	ctx := context.Background()
	p := s.createProduct(t, 1, "redis", 0)
	if status, _, _ := s.purchase(p.ID, 1); status != http.StatusCreated {
		t.Fatalf("purchase: %d", status)
	}
	if status, code, _ := s.purchase(p.ID, 2); code != api.CodeSoldOut {
		t.Fatalf("sold out: %d %s", status, code)
	}
	path := fmt.Sprintf("/api/v1/products/%d/restock", p.ID)
	restock := func(key, body string) (int, string, http.Header) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+adminToken)
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := s.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var pr api.Problem
		if resp.StatusCode >= 400 {
			mustJSONReader(t, resp, &pr)
		}
		return resp.StatusCode, pr.Code, resp.Header
	}
	if status, _, h := restock("truck-7", `{"units": 2}`); status != http.StatusOK || h.Get("Idempotent-Replayed") != "" {
		t.Fatalf("restock: %d %v", status, h)
	}
	if status, _, h := restock("", `{"units": 2, "key": "truck-7"}`); status != http.StatusOK || h.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay: %d %v", status, h)
	}
	for _, c := range []struct {
		key, body string
		status    int
		code      string
	}{
		{"truck-7", `{"units": 3}`, http.StatusConflict, api.CodeIdempotencyConflict},
		{"k", `{"units": 0}`, http.StatusBadRequest, api.CodeInvalidRequest},
		{"k", `{"units": 100000000}`, http.StatusBadRequest, api.CodeInvalidRequest},
		{"", `{"units": 1}`, http.StatusBadRequest, api.CodeInvalidRequest},
		{"a", `{"units": 1, "key": "b"}`, http.StatusBadRequest, api.CodeInvalidRequest},
	} {
		if status, code, _ := restock(c.key, c.body); status != c.status || code != c.code {
			t.Errorf("restock %q %s: %d %s, want %d %s", c.key, c.body, status, code, c.status, c.code)
		}
	}
	if _, err := s.API.Restock(ctx, 1<<50, "k", 1); !isCode(err, api.CodeProductNotFound) {
		t.Errorf("restock of no product: %v", err)
	}
	for u := int64(2); u <= 4; u++ { // 2 units back: users 2 and 3 buy, 4 finds it sold out
		want := http.StatusCreated
		if u == 4 {
			want = http.StatusConflict
		}
		if status, code, _ := s.purchase(p.ID, u); status != want {
			t.Fatalf("user %d after the restock: %d %s", u, status, code)
		}
	}
	if a := s.audit(t, p.ID); a.InitialStock != 3 || a.Restocked != 2 || !a.Consistent {
		t.Fatalf("audit = %+v", a)
	}
	if _, err := s.API.End(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if status, code, _ := s.purchase(p.ID, 9); status != http.StatusGone || code != api.CodeSaleEnded {
		t.Fatalf("after the end: %d %s", status, code)
	}
	if status, code, _ := s.purchase(p.ID, 1); code != api.CodeAlreadyPurchased {
		t.Fatalf("a buyer after the end: %d %s", status, code)
	}
	metrics, err := s.API.Metrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`seckill_sale_controls_total{action="restock"} 1`, `seckill_sale_controls_total{action="restock_replay"} 1`,
		`seckill_sale_controls_total{action="end"} 1`, `seckill_restocked_units_total 2`, `seckill_purchases_total{outcome="sale_paused",strategy="redis"} 0`} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// mustJSONReader decodes resp's body into v, failing the test if it cannot.
func mustJSONReader(t testing.TB, resp *http.Response, v any) {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	mustJSON(t, b, v)
}
