package app_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// TestSaleWindow: for every production strategy, over HTTP, a product whose sale starts in
// 2 s answers 409 sale_not_started with Retry-After and writes nothing, then sells once the
// start passed; one whose sale ended answers 410 sale_ended and writes nothing.
func TestSaleWindow(t *testing.T) {
	s := newStack(t, order.Config{})
	ctx := context.Background()
	for _, strategy := range inventory.Strategies {
		t.Run(string(strategy), func(t *testing.T) {
			t.Parallel()
			stock := 3
			start := time.Now().Add(2 * time.Second).Truncate(time.Microsecond)
			p, err := s.API.CreateProduct(ctx, api.NewProduct{Name: "window", Stock: &stock, Strategy: string(strategy), StartsAt: &start})
			if err != nil {
				t.Fatalf("create: %v", err)
			}
			if p.StartsAt == nil || !p.StartsAt.Equal(start) || p.EndsAt != nil {
				t.Fatalf("created window = %v, %v; want starts_at %v, no ends_at", p.StartsAt, p.EndsAt, start)
			}
			if got, err := s.API.Product(ctx, p.ID); err != nil || got.StartsAt == nil || !got.StartsAt.Equal(start) {
				t.Fatalf("GET product: %+v, %v; want starts_at %v", got, err, start)
			}
			for user := int64(1); user <= 3; user++ {
				_, err := s.API.Purchase(ctx, p.ID, user)
				prob := windowProblem(t, err, api.CodeSaleNotStarted, http.StatusConflict)
				if secs, _ := strconv.Atoi(prob.RetryAfter); secs < 1 || secs > 3 {
					t.Errorf("Retry-After = %q, want 1 to 3 seconds", prob.RetryAfter)
				}
				if prob.StartsAt == nil || !prob.StartsAt.Equal(start) {
					t.Errorf("problem starts_at = %v, want %v", prob.StartsAt, start)
				}
			}
			a := s.audit(t, p.ID)
			if a.Orders != 0 || a.Stock != stock || orders(t, s, p.ID) != 0 {
				t.Fatalf("before the start: audit %+v, orders %d; want nothing written", a, orders(t, s, p.ID))
			}
			switch { // prepared: the gate is seeded before the start, with no buyer
			case strategy == inventory.StrategyRedis && (a.Redis == nil || !a.Redis.Seeded || a.Redis.Buyers != 0):
				t.Errorf("redis gate before the start: %+v, want seeded, no buyer", a.Redis)
			case strategy == inventory.StrategyQueue && (a.Queue == nil || !a.Queue.Seeded || a.Queue.Buyers != 0 || a.Queue.Queued != 0):
				t.Errorf("queue before the start: %+v, want seeded, nothing queued", a.Queue)
			}
			time.Sleep(time.Until(start))
			for user := int64(1); user <= 3; user++ {
				status, code, err := s.purchase(p.ID, user)
				if err != nil || (status != http.StatusCreated && status != http.StatusAccepted) {
					t.Errorf("user %d after the start: %d %s %v, want 201 (or 202)", user, status, code, err)
				}
			}

			past := time.Now().Add(-time.Minute)
			ended, err := s.API.CreateProduct(ctx, api.NewProduct{Name: "ended", Stock: &stock, Strategy: string(strategy), EndsAt: &past})
			if err != nil {
				t.Fatalf("create ended: %v", err)
			}
			_, err = s.API.Purchase(ctx, ended.ID, 1)
			if prob := windowProblem(t, err, api.CodeSaleEnded, http.StatusGone); prob.RetryAfter != "" || prob.EndsAt == nil {
				t.Errorf("sale_ended: Retry-After %q, ends_at %v; want none, the end", prob.RetryAfter, prob.EndsAt)
			}
			if a := s.audit(t, ended.ID); a.Orders != 0 || a.Stock != stock || orders(t, s, ended.ID) != 0 {
				t.Errorf("ended: audit %+v, want nothing written", a)
			}
		})
	}
}

// TestSaleWindowBundle: a bundle with a product whose sale has not started, or has ended, is
// refused with that product's code and id, and writes nothing.
func TestSaleWindowBundle(t *testing.T) {
	s := newStack(t, order.Config{})
	ctx := context.Background()
	stock := 2
	later, past := time.Now().Add(time.Hour), time.Now().Add(-time.Hour)
	open := s.createProduct(t, stock, "dlock", 0)
	for _, tc := range []struct {
		np     api.NewProduct
		code   string
		status int
	}{
		{api.NewProduct{Name: "later", Stock: &stock, StartsAt: &later}, api.CodeSaleNotStarted, http.StatusConflict},
		{api.NewProduct{Name: "ended", Stock: &stock, EndsAt: &past}, api.CodeSaleEnded, http.StatusGone},
	} {
		p, err := s.API.CreateProduct(ctx, tc.np)
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.API.PurchaseBundle(ctx, 7, open.ID, p.ID)
		if prob := windowProblem(t, err, tc.code, tc.status); prob.ProductID != p.ID {
			t.Errorf("%s: product_id = %d, want %d", tc.code, prob.ProductID, p.ID)
		}
	}
	if n := orders(t, s, open.ID); n != 0 {
		t.Errorf("orders of the open product = %d, want 0", n)
	}
}

// TestSaleWindowInvalid: a window that ends before it starts, or a time that is not RFC
// 3339, is 400 invalid_request with a detail that says so.
func TestSaleWindowInvalid(t *testing.T) {
	s := newStack(t, order.Config{})
	for _, tc := range []struct{ body, detail string }{
		{`{"name":"w","stock":1,"starts_at":"2030-01-01T20:00:00Z","ends_at":"2030-01-01T19:00:00Z"}`, "ends_at (2030-01-01T19:00:00Z) must be after starts_at"},
		{`{"name":"w","stock":1,"starts_at":"2030-01-01T20:00:00Z","ends_at":"2030-01-01T20:00:00Z"}`, "must be after starts_at"},
		{`{"name":"w","stock":1,"starts_at":"tomorrow"}`, "RFC 3339"},
		{`{"name":"w","stock":1,"ends_at":"2030-01-01"}`, "RFC 3339"},
		{`{"name":"w","stock":1,"starts_at":1893456000}`, "RFC 3339"},
	} {
		status, code, body, _, err := s.do(http.MethodPost, "/api/v1/products", adminToken, tc.body)
		if err != nil {
			t.Fatal(err)
		}
		if status != http.StatusBadRequest || code != api.CodeInvalidRequest || !strings.Contains(string(body), tc.detail) {
			t.Errorf("%s: %d %s %s, want 400 invalid_request saying %q", tc.body, status, code, body, tc.detail)
		}
	}
	var n int64
	if err := s.DB.Raw(`SELECT count(*) FROM products`).Scan(&n).Error; err != nil || n != 0 {
		t.Errorf("products = %d (%v), want none created", n, err)
	}
}

// windowProblem returns err's problem, failing the test unless it has code and status.
func windowProblem(t *testing.T, err error, code string, status int) *api.Problem {
	t.Helper()
	var p *api.Problem
	if !errors.As(err, &p) || p.Code != code || p.Status != status {
		t.Fatalf("answer %v, want %d %s", err, status, code)
	}
	return p
}

// orders counts product id's orders in PostgreSQL, whatever their status.
func orders(t *testing.T, s *stack, id int64) int64 {
	t.Helper()
	var n int64
	if err := s.DB.Raw(`SELECT count(*) FROM orders WHERE product_id = ?`, id).Scan(&n).Error; err != nil {
		t.Fatal(fmt.Errorf("count orders: %w", err))
	}
	return n
}

// TestClockSkewExported: the process measures its clock against PostgreSQL's at start and
// exports the skew, well under a second between processes of one machine.
func TestClockSkewExported(t *testing.T) {
	s := newStack(t, order.Config{})
	deadline := time.Now().Add(10 * time.Second)
	for {
		body, err := s.API.Metrics(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(body), "\n") {
			v, ok := strings.CutPrefix(line, "seckill_clock_skew_seconds ")
			if !ok {
				continue
			}
			if skew, err := strconv.ParseFloat(v, 64); err != nil || skew < -0.5 || skew > 0.5 {
				t.Fatalf("seckill_clock_skew_seconds = %q, want within 0.5 s of 0 on one machine", v)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no seckill_clock_skew_seconds within 10 s of the start")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
