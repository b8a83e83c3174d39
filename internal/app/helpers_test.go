package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/labapi"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/contract"
)

const adminToken = "test-admin-token"

// stack is one API process on its own schema and Redis prefix, served over real HTTP.
type stack struct {
	URL    string
	App    *app.App
	DB     *gorm.DB
	Redis  *redis.Client
	Prefix string
	API    *client.Client // the typed client, with the admin token
	HTTP   *http.Client   // for requests the typed client cannot send
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

// production is the app.Config.Plug of the production build: nothing plugged in. serve
// plugs in the lab build's (labapi.Plug) when cfg has none, as the tests' API process
// (launch.BuildAPI) is the lab build.
func production(app.Parts) app.Plugins { return app.Plugins{} }

func serve(t testing.TB, cfg app.Config) *stack {
	t.Helper()
	if cfg.Plug == nil {
		cfg.Plug = labapi.Plug(labapi.Options{})
	}
	gdb, rdb, prefix := cfg.DB, cfg.Redis.(*redis.Client), cfg.RedisPrefix
	a := app.New(cfg)
	srv := httptest.NewServer(a.Handler)
	t.Cleanup(func() { srv.Close(); a.Close() })
	tr := &http.Transport{MaxIdleConnsPerHost: 256, MaxConnsPerHost: 256}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: contract.Transport(t, tr)} // every exchange checked against the description
	return &stack{URL: srv.URL, App: a, DB: gdb, Redis: rdb, Prefix: prefix, HTTP: hc,
		API: client.New(srv.URL, &client.Options{AdminToken: adminToken, HTTPClient: hc})}
}

// do sends a raw request, body as is, and returns the status, the problem code (if any) and
// the raw body: for what the typed client cannot send, malformed bodies and bad paths.
func (s *stack) do(method, path, token, body string) (int, string, []byte, http.Header, error) {
	req, err := http.NewRequestWithContext(context.Background(), method, s.URL+path, bytes.NewBufferString(body))
	if err != nil {
		return 0, "", nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.HTTP.Do(req)
	if err != nil {
		return 0, "", nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	var p api.Problem
	if resp.StatusCode >= 400 {
		_ = json.Unmarshal(b, &p)
	}
	return resp.StatusCode, p.Code, b, resp.Header, err
}

func (s *stack) createProduct(t testing.TB, stock int, strategy string, thinkMS int) api.Product {
	t.Helper()
	strategy, fair := strings.CutSuffix(strategy, "-fair") // "dlock-fair": a fair dlock product
	p, err := s.API.CreateProduct(context.Background(),
		api.NewProduct{Name: "widget", Stock: &stock, Strategy: strategy, ThinkMS: thinkMS, Fair: fair})
	if err != nil {
		t.Fatalf("create product: %v", err)
	}
	return p
}

// purchase buys through the typed client and returns the answer's status and problem code
// (201 and "" for an order); the error is a transport error only.
func (s *stack) purchase(id, user int64) (int, string, error) {
	_, err := s.API.Purchase(context.Background(), id, user)
	return answerOf(err, http.StatusCreated)
}

// answerOf splits what the typed client returned into the answer's status and problem code,
// ok being the status of a success (202 for a queued purchase); an error that is not a problem
// is returned.
func answerOf(err error, ok int) (int, string, error) {
	var p *api.Problem
	var accepted *client.AcceptedError
	switch {
	case err == nil:
		return ok, "", nil
	case errors.As(err, &p):
		return p.Status, p.Code, nil
	case errors.As(err, &accepted):
		return http.StatusAccepted, "", nil
	}
	return 0, "", err
}

func (s *stack) audit(t testing.TB, id int64) api.Audit {
	t.Helper()
	a, err := s.API.Audit(context.Background(), id)
	if err != nil {
		t.Fatalf("audit: %v", err)
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
