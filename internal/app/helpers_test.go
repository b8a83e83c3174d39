package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

const adminToken = "test-admin-token"

// stack is one API process on its own schema and Redis prefix, served over real HTTP.
type stack struct {
	URL    string
	App    *app.App
	DB     *gorm.DB
	Redis  *redis.Client
	Prefix string
	client *http.Client
}

func newStack(t testing.TB, cfg order.Config) *stack {
	t.Helper()
	gdb := testenv.Postgres(t)
	rdb, prefix := testenv.Redis(t)
	return newStackOn(t, gdb, rdb, prefix, cfg)
}

// newStackOn serves another API process over the same database and Redis prefix.
func newStackOn(t testing.TB, gdb *gorm.DB, rdb *redis.Client, prefix string, cfg order.Config) *stack {
	t.Helper()
	return serve(t, app.Config{DB: gdb, Redis: rdb, RedisPrefix: prefix, AdminToken: adminToken, Order: cfg})
}

// newStackOnToken serves another API process like s but with another admin token.
func newStackOnToken(t testing.TB, s *stack, token string) *stack {
	t.Helper()
	return serve(t, app.Config{DB: s.DB, Redis: s.Redis, RedisPrefix: s.Prefix, AdminToken: token})
}

func serve(t testing.TB, cfg app.Config) *stack {
	t.Helper()
	gdb, rdb, prefix := cfg.DB, cfg.Redis.(*redis.Client), cfg.RedisPrefix
	a := app.New(cfg)
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(func() { srv.Close(); a.Close() })
	tr := &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}
	t.Cleanup(tr.CloseIdleConnections)
	return &stack{URL: srv.URL, App: a, DB: gdb, Redis: rdb, Prefix: prefix, client: &http.Client{Transport: tr}}
}

type product struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	Stock        int    `json:"stock"`
	InitialStock int    `json:"initial_stock"`
	Sold         int    `json:"sold"`
	Strategy     string `json:"strategy"`
	ThinkMS      int    `json:"think_ms"`
}

type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Code   string `json:"code"`
	Detail string `json:"detail"`
}

// do sends a request and returns the status, the problem code (if any) and the raw body.
func (s *stack) do(method, path, token, body string) (int, string, []byte, http.Header, error) {
	req, err := http.NewRequestWithContext(context.Background(), method, s.URL+path, bytes.NewBufferString(body))
	if err != nil {
		return 0, "", nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, "", nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	var p problem
	if resp.StatusCode >= 400 {
		_ = json.Unmarshal(b, &p)
	}
	return resp.StatusCode, p.Code, b, resp.Header, err
}

func (s *stack) createProduct(t testing.TB, stock int, strategy string, thinkMS int) product {
	t.Helper()
	body := fmt.Sprintf(`{"name":"widget","stock":%d,"strategy":%q,"think_ms":%d}`, stock, strategy, thinkMS)
	status, _, b, _, err := s.do(http.MethodPost, "/api/v1/products", adminToken, body)
	if err != nil || status != http.StatusCreated {
		t.Fatalf("create product = %d %s %v", status, b, err)
	}
	var p product
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func (s *stack) purchase(id, user int64) (int, string, error) {
	status, code, _, _, err := s.do(http.MethodPost, fmt.Sprintf("/api/v1/products/%d/purchase", id), "",
		fmt.Sprintf(`{"user_id":%d}`, user))
	return status, code, err
}

func (s *stack) audit(t testing.TB, id int64) order.Audit {
	t.Helper()
	status, _, b, _, err := s.do(http.MethodGet, fmt.Sprintf("/api/v1/products/%d/audit", id), adminToken, "")
	if err != nil || status != http.StatusOK {
		t.Fatalf("audit = %d %s %v", status, b, err)
	}
	var a order.Audit
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// tally counts answers by status and code.
type tally struct {
	mu sync.Mutex
	m  map[string]int
}

func (t *tally) add(status int, code string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]int{}
	}
	t.m[fmt.Sprintf("%d %s", status, code)]++
}

func (t *tally) get(key string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[key]
}

// crowd sends n concurrent purchases of product id, user ids from userOf, over the stacks
// in turn, and tallies the answers. Transport errors fail the test.
func crowd(t testing.TB, stacks []*stack, id int64, n int, userOf func(i int) int64) *tally {
	t.Helper()
	var (
		wg    sync.WaitGroup
		res   tally
		start = make(chan struct{})
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			status, code, err := stacks[i%len(stacks)].purchase(id, userOf(i))
			if err != nil {
				t.Errorf("purchase: %v", err)
				return
			}
			res.add(status, code)
		}()
	}
	close(start)
	wg.Wait()
	return &res
}

func mustJSON(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}
