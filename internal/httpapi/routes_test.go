package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/testenv/contract"
)

// TestNoRedirects: a path that is a route but for a trailing slash, a doubled slash or its
// case is no route: 404 not_found as a problem with the request's id, as the description
// says of every path it does not list, never a redirect (gin's default, an HTML 301 or 307
// without X-Request-ID).
func TestNoRedirects(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(server())
	defer srv.Close()
	hc := contract.Client(t, &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse // see the redirect itself
	}})
	for _, tt := range []struct{ method, path string }{
		{"GET", "/api/v1/products/1/"},
		{"POST", "/api/v1/products/1/purchase/"},
		{"POST", "/api/v1/products/"},
		{"POST", "/api/v1/bundles/purchase/"},
		{"GET", "/api/v1/products/1/orders/2/"},
		{"POST", "/api/v1/products/1/orders/2/pay/"},
		{"GET", "/healthz/"},
		{"GET", "/api/v1/openapi.yaml/"},
		{"GET", "/API/v1/products/1"},
		{"GET", "/api/v1//products/1"},
	} {
		req, err := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(`{"user_id":1}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		var p api.Problem
		perr := json.Unmarshal(body, &p)
		id := resp.Header.Get("X-Request-ID")
		switch {
		case resp.StatusCode != http.StatusNotFound || resp.Header.Get("Location") != "":
			t.Errorf("%s %s = %s, Location %q, want 404 and no redirect:\n%s", tt.method, tt.path, resp.Status, resp.Header.Get("Location"), body)
		case !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/problem+json") || perr != nil || p.Code != api.CodeNotFound:
			t.Errorf("%s %s: %s %s, want a problem with code not_found", tt.method, tt.path, resp.Header.Get("Content-Type"), body)
		case id == "" || p.RequestID != id:
			t.Errorf("%s %s: X-Request-ID %q, the problem's request_id %q: want one id in both", tt.method, tt.path, id, p.RequestID)
		}
	}
}
