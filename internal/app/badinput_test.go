package app_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/order"
)

// TestBadInput: every bad request gets a 4xx problem with a stable code, never a 5xx, and
// never SQL, Go error text or a stack trace.
func TestBadInput(t *testing.T) {
	t.Parallel()
	s := newStack(t, order.Config{})
	p := s.createProduct(t, 5, "dlock", 0)
	buy := fmt.Sprintf("/api/v1/products/%d/purchase", p.ID)
	tests := []struct {
		name, method, path, token, body string
		status                          int
		code                            string
	}{
		{"malformed JSON", "POST", buy, "", `{"user_id":`, 400, "invalid_request"},
		{"not an object", "POST", buy, "", `[1,2]`, 400, "invalid_request"},
		{"empty body", "POST", buy, "", ``, 400, "invalid_request"},
		{"unknown field", "POST", buy, "", `{"user_id":1,"admin":true}`, 400, "invalid_request"},
		{"duplicate key", "POST", buy, "", `{"user_id":1,"user_id":2}`, 400, "invalid_request"},
		{"case-variant key", "POST", buy, "", `{"User_Id":3}`, 400, "invalid_request"},
		{"case-variant duplicate", "POST", buy, "", `{"user_id":1,"USER_ID":2}`, 400, "invalid_request"},
		{"missing user_id", "POST", buy, "", `{}`, 400, "invalid_request"},
		{"null user_id", "POST", buy, "", `{"user_id":null}`, 400, "invalid_request"},
		{"zero user_id", "POST", buy, "", `{"user_id":0}`, 400, "invalid_request"},
		{"negative user_id", "POST", buy, "", `{"user_id":-7}`, 400, "invalid_request"},
		{"fractional user_id", "POST", buy, "", `{"user_id":1.5}`, 400, "invalid_request"},
		{"string user_id", "POST", buy, "", `{"user_id":"1"}`, 400, "invalid_request"},
		{"user_id out of range", "POST", buy, "", `{"user_id":9223372036854775808}`, 400, "invalid_request"},
		{"trailing data", "POST", buy, "", `{"user_id":1} {"user_id":2}`, 400, "invalid_request"},
		{"body too large", "POST", buy, "", `{"user_id":1,"x":"` + strings.Repeat("a", 8<<10) + `"}`, 413, "request_too_large"},
		{"product id not a number", "POST", "/api/v1/products/abc/purchase", "", `{"user_id":1}`, 400, "invalid_request"},
		{"product id zero", "POST", "/api/v1/products/0/purchase", "", `{"user_id":1}`, 400, "invalid_request"},
		{"product id out of range", "POST", "/api/v1/products/9223372036854775808/purchase", "", `{"user_id":1}`, 400, "invalid_request"},
		{"unknown product", "POST", "/api/v1/products/999999999/purchase", "", `{"user_id":1}`, 404, "product_not_found"},
		{"get unknown product", "GET", "/api/v1/products/999999999", "", ``, 404, "product_not_found"},
		{"get bad id", "GET", "/api/v1/products/-1", "", ``, 400, "invalid_request"},
		{"create without token", "POST", "/api/v1/products", "", `{"name":"x","stock":1}`, 401, "unauthorized"},
		{"create with wrong token", "POST", "/api/v1/products", "nope", `{"name":"x","stock":1}`, 401, "unauthorized"},
		{"audit without token", "GET", fmt.Sprintf("/api/v1/products/%d/audit", p.ID), "", ``, 401, "unauthorized"},
		{"create missing stock", "POST", "/api/v1/products", adminToken, `{"name":"x"}`, 400, "invalid_request"},
		{"create negative stock", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":-1}`, 400, "invalid_request"},
		{"create huge stock", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":100000000000}`, 400, "invalid_request"},
		{"create empty name", "POST", "/api/v1/products", adminToken, `{"name":"","stock":1}`, 400, "invalid_request"},
		{"create long name", "POST", "/api/v1/products", adminToken, `{"name":"` + strings.Repeat("n", 201) + `","stock":1}`, 400, "invalid_request"},
		{"create bad strategy", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":1,"strategy":"magic"}`, 400, "invalid_request"},
		{"create bad think_ms", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":1,"think_ms":-5}`, 400, "invalid_request"},
		{"create duplicate key", "POST", "/api/v1/products", adminToken, `{"name":"x","stock":1,"stock":2}`, 400, "invalid_request"},
		{"create case-variant key", "POST", "/api/v1/products", adminToken, `{"name":"x","Stock":1}`, 400, "invalid_request"},
		{"audit unknown product", "GET", "/api/v1/products/999999999/audit", adminToken, ``, 404, "product_not_found"},
		{"wrong method", "DELETE", buy, "", ``, 405, "method_not_allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code, body, hdr, err := s.do(tt.method, tt.path, tt.token, tt.body)
			if err != nil {
				t.Fatal(err)
			}
			if status != tt.status || code != tt.code {
				t.Fatalf("%s %s = %d %q, want %d %q; body %s", tt.method, tt.path, status, code, tt.status, tt.code, body)
			}
			if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "application/problem+json") {
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
		var pr problem
		mustJSON(t, body, &pr)
		if status != http.StatusBadRequest || code != "invalid_request" || pr.Detail != tt.detail {
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
	status, code, body, _, _ := s.do("POST", "/api/v1/products", "anything", `{"name":"x","stock":1}`)
	if status != http.StatusForbidden || code != "admin_disabled" || !strings.Contains(string(body), "ADMIN_TOKEN") {
		t.Fatalf("create with admin disabled = %d %s", status, body)
	}
}
