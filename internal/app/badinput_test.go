package app_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/order"
)

// TestBadInput: every bad request gets a 4xx problem with a stable code, never a 5xx, and
// never SQL, Go error text or a stack trace.
func TestBadInput(t *testing.T) {
	t.Parallel()
	s := newStack(t, order.Config{})
	p := s.createProduct(t, 5, "dlock", 0)
	for _, tt := range badInputs(p.ID) {
		t.Run(tt.name, func(t *testing.T) {
			status, code, body, hdr, err := s.do(tt.method, tt.path, tt.token, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if status != tt.status || code != tt.code {
				t.Fatalf("%s %s = %d %q, want %d %q; body %s", tt.method, tt.path, status, code, tt.status, tt.code, body)
			}
			if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, api.ContentTypeProblem) {
				t.Errorf("Content-Type = %q, want application/problem+json", ct)
			}
			for _, leak := range []string{"SQL", "sql", "pq:", "pgx", "gorm", "goroutine", ".go:", "inventory:", "order:"} {
				if strings.Contains(string(body), leak) {
					t.Errorf("body leaks %q: %s", leak, body)
				}
			}
		})
	}
}

// badInput is a bad request and the answer it must get.
type badInput struct {
	name, method, path, token, body string
	status                          int
	code                            string
}

// badInputs are the bad requests TestBadInput and TestContract send; p is a product that
// exists, with stock.
func badInputs(p int64) []badInput {
	buy := fmt.Sprintf("/api/v1/products/%d/purchase", p)
	return []badInput{
		{"malformed JSON", "POST", buy, "", `{"user_id":`, 400, api.CodeInvalidRequest},
		{"not an object", "POST", buy, "", `[1,2]`, 400, api.CodeInvalidRequest},
		{"empty body", "POST", buy, "", ``, 400, api.CodeInvalidRequest},
		{"unknown field", "POST", buy, "", `{"user_id":1,"admin":true}`, 400, api.CodeInvalidRequest},
		{"duplicate key", "POST", buy, "", `{"user_id":1,"user_id":2}`, 400, api.CodeInvalidRequest},
		{"case-variant key", "POST", buy, "", `{"User_Id":3}`, 400, api.CodeInvalidRequest},
		{"case-variant duplicate", "POST", buy, "", `{"user_id":1,"USER_ID":2}`, 400, api.CodeInvalidRequest},
		{"missing user_id", "POST", buy, "", `{}`, 400, api.CodeInvalidRequest},
		{"null user_id", "POST", buy, "", `{"user_id":null}`, 400, api.CodeInvalidRequest},
		{"zero user_id", "POST", buy, "", `{"user_id":0}`, 400, api.CodeInvalidRequest},
		{"negative user_id", "POST", buy, "", `{"user_id":-7}`, 400, api.CodeInvalidRequest},
		{"fractional user_id", "POST", buy, "", `{"user_id":1.5}`, 400, api.CodeInvalidRequest},
		{"string user_id", "POST", buy, "", `{"user_id":"1"}`, 400, api.CodeInvalidRequest},
		{"user_id out of range", "POST", buy, "", `{"user_id":9223372036854775808}`, 400, api.CodeInvalidRequest},
		{"trailing data", "POST", buy, "", `{"user_id":1} {"user_id":2}`, 400, api.CodeInvalidRequest},
		{"body too large", "POST", buy, "", `{"user_id":1,"x":"` + strings.Repeat("a", 8<<10) + `"}`, 413, api.CodeRequestTooLarge},
		{"product id not a number", "POST", "/api/v1/products/abc/purchase", "", `{"user_id":1}`, 400, api.CodeInvalidRequest},
		{"product id zero", "POST", "/api/v1/products/0/purchase", "", `{"user_id":1}`, 400, api.CodeInvalidRequest},
		{"product id out of range", "POST", "/api/v1/products/9223372036854775808/purchase", "", `{"user_id":1}`, 400, api.CodeInvalidRequest},
		{"unknown product", "POST", "/api/v1/products/999999999/purchase", "", `{"user_id":1}`, 404, api.CodeProductNotFound},
		{"get unknown product", "GET", "/api/v1/products/999999999", "", ``, 404, api.CodeProductNotFound},
		{"get bad id", "GET", "/api/v1/products/-1", "", ``, 400, api.CodeInvalidRequest},
		{"create without token", "POST", "/api/v1/products", "", `{"name":"x","stock":1}`, 401, api.CodeUnauthorized},
		{"create with wrong token", "POST", "/api/v1/products", "nope", `{"name":"x","stock":1}`, 401, api.CodeUnauthorized},
		{"audit without token", "GET", fmt.Sprintf("/api/v1/products/%d/audit", p), "", ``, 401, api.CodeUnauthorized},
		{"create missing stock", "POST", "/api/v1/products", adminToken, `{"name":"x"}`, 400, api.CodeInvalidRequest},
		{"create negative stock", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":-1}`, 400, api.CodeInvalidRequest},
		{"create huge stock", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":100000000000}`, 400, api.CodeInvalidRequest},
		{"create empty name", "POST", "/api/v1/products", adminToken, `{"name":"","stock":1}`, 400, api.CodeInvalidRequest},
		{"create long name", "POST", "/api/v1/products", adminToken, `{"name":"` + strings.Repeat("n", 201) + `","stock":1}`, 400, api.CodeInvalidRequest},
		{"create bad strategy", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":1,"strategy":"magic"}`, 400, api.CodeInvalidRequest},
		{"create bad think_ms", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":1,"think_ms":-5}`, 400, api.CodeInvalidRequest},
		{"create fair not dlock", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":1,"strategy":"optimistic","fair":true}`, 400, api.CodeInvalidRequest},
		{"create lab without lock", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":1,"strategy":"lab"}`, 400, api.CodeInvalidRequest},
		{"create lab unknown lock", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":1,"strategy":"lab","lock":"spin"}`, 400, api.CodeInvalidRequest},
		{"create lock without lab", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":1,"lock":"dlock"}`, 400, api.CodeInvalidRequest},
		{"create lab bad lease", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":1,"strategy":"lab","lock":"lease","lease_ms":5}`, 400, api.CodeInvalidRequest},
		{"create duplicate key", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":1,"stock":2}`, 400, api.CodeInvalidRequest},
		{"create case-variant key", "POST", "/api/v1/products", adminToken, `{"name":"x","Stock":1}`, 400, api.CodeInvalidRequest},
		{"audit unknown product", "GET", "/api/v1/products/999999999/audit", adminToken, ``, 404, api.CodeProductNotFound},
		{"wrong method", "DELETE", buy, "", ``, 405, api.CodeMethodNotAllowed},
	}
}

// TestExactKeys: a purchase body with a key that differs from "user_id" in case, or that
// repeats it, is refused with a detail that names the key and never a value, and buys
// nothing (encoding/json alone would buy for the last or case-variant user id).
func TestExactKeys(t *testing.T) {
	t.Parallel()
	s := newStack(t, order.Config{})
	p := s.createProduct(t, 5, "dlock", 0)
	buy := fmt.Sprintf("/api/v1/products/%d/purchase", p.ID)
	for _, tt := range []struct{ body, detail string }{
		{`{"user_id":1,"USER_ID":2}`, `unknown field "USER_ID"`},
		{`{"User_Id":3}`, `unknown field "User_Id"`},
		{`{"user_id":4,"user_id":5}`, `duplicate key "user_id"`},
	} {
		status, code, body, _, err := s.do(http.MethodPost, buy, "", tt.body)
		if err != nil {
			t.Fatal(err)
		}
		var pr api.Problem
		mustJSON(t, body, &pr)
		if status != http.StatusBadRequest || code != api.CodeInvalidRequest || pr.Detail != tt.detail {
			t.Errorf("purchase with %s = %d %s, want 400 invalid_request %q", tt.body, status, body, tt.detail)
		}
	}
	if a := s.audit(t, p.ID); a.Orders != 0 || a.Stock != 5 {
		t.Errorf("after refused purchases: %d orders, stock %d; want 0 and 5", a.Orders, a.Stock)
	}
}

func TestAdminDisabledWithoutToken(t *testing.T) {
	t.Parallel()
	base := newStack(t, order.Config{})
	s := newStackOnToken(t, base, "")
	c := client.New(s.URL, &client.Options{AdminToken: "anything"})
	_, err := c.CreateProduct(context.Background(), api.NewProduct{Name: "x", Stock: new(1)})
	var p *api.Problem
	if !errors.As(err, &p) || p.Status != http.StatusForbidden || p.Code != api.CodeAdminDisabled || !strings.Contains(p.Detail, "ADMIN_TOKEN") {
		t.Fatalf("create with admin disabled = %v", err)
	}
}

// TestNoFairUnderRedlock: an API whose product locks are Redlock cannot keep a fair queue,
// so it refuses to create a fair product (400, with the reason) instead of selling it with
// errors.
func TestNoFairUnderRedlock(t *testing.T) {
	t.Parallel()
	base := newStack(t, order.Config{})
	s := serve(t, app.Config{DB: base.DB, Redis: base.Redis, RedisPrefix: base.Prefix, AdminToken: adminToken,
		LockNodes: []redis.UniversalClient{base.Redis}})
	_, err := s.API.CreateProduct(context.Background(), api.NewProduct{Name: "x", Stock: new(1), Fair: true})
	var p *api.Problem
	if !errors.As(err, &p) || p.Status != http.StatusBadRequest || p.Code != api.CodeInvalidRequest || !strings.Contains(p.Detail, "Redlock") {
		t.Fatalf("create a fair product under Redlock = %v", err)
	}
	if _, err := base.API.CreateProduct(context.Background(), api.NewProduct{Name: "x", Stock: new(1), Fair: true}); err != nil {
		t.Fatalf("create a fair product on one Redis = %v", err)
	}
}
