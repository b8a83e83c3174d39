package contract_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/testenv/contract"
)

// fakeT collects what the checks report instead of failing the test.
type fakeT struct {
	testing.TB
	mu       sync.Mutex
	errs     []string
	cleanups []func()
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *fakeT) Fatalf(format string, args ...any) { f.Errorf(format, args...) }
func (f *fakeT) Cleanup(fn func())                 { f.cleanups = append(f.cleanups, fn) }

// end runs the cleanups, as the end of a test does, and returns what was reported.
func (f *fakeT) end() string {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
	return strings.Join(f.errs, "\n")
}

const audit = `{"product_id":1,"initial_stock":1,"stock":0,"orders":1,"pending":0,"ended":0,"sold":1,"restocked":0,"oversold":0,"duplicate_users":0,"consistent":true}`

const order = `{"order_id":7,"product_id":1,"user_id":42,"status":"paid","created_at":"2026-11-26T12:00:00Z"}`

// answer is a fake API that answers every request with status, headers and body.
func answer(t *testing.T, status int, header map[string]string, body string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func problem(code string, status int) string {
	return fmt.Sprintf(`{"type":"%s%s","title":"x","status":%d,"code":"%s","request_id":"req-1"}`, api.ProblemTypeBase, code, status, code)
}

var problemCT = map[string]string{"Content-Type": api.ContentTypeProblem}

// TestCaught is the negative control: answers that break the description fail the test
// that got them, naming the route, the status and what is wrong; the answers that keep it
// pass.
func TestCaught(t *testing.T) {
	busy := map[string]string{"Content-Type": api.ContentTypeProblem, "Retry-After": "1"}
	for _, tt := range []struct {
		name   string
		status int
		header map[string]string
		body   string
		want   string // in the report; "" for an answer that keeps the contract
	}{
		{"order", 201, nil, order, ""},
		{"sold out", 409, problemCT, problem("sold_out", 409), ""},
		{"busy", 503, busy, problem("busy", 503), ""},
		{"unknown code", 409, problemCT, problem("out_of_luck", 409), "POST /api/v1/products/{id}/purchase -> 409"},
		{"code of another status", 409, problemCT, problem("rate_limited", 409), "-> 409"},
		{"code of another route", 404, problemCT, problem("order_not_found", 404), "-> 404"},
		{"no order_id", 201, nil, `{"product_id":1,"user_id":42,"status":"paid","created_at":"2026-11-26T12:00:00Z"}`, "order_id"},
		{"a field too many", 201, nil, strings.Replace(order, "{", `{"coupon":"x",`, 1), "coupon"},
		{"no Retry-After", 503, problemCT, problem("busy", 503), "Retry-After"},
		{"status not listed", 402, problemCT, problem("sold_out", 402), "status is not supported"},
		{"not a problem", 409, nil, `sold out`, "-> 409"},
		// After "sold out" above: answers with valid request ids share one remembered key,
		// and one whose id breaks the pattern is still validated.
		{"request id breaks its pattern", 409, problemCT, strings.Replace(problem("sold_out", 409), "req-1", "req 1", 1), "request_id"},
		{"request id too long", 409, problemCT, strings.Replace(problem("sold_out", 409), "req-1", strings.Repeat("r", 129), 1), "request_id"},
		{"202 without Location", 202, nil, `{"status":"accepted","product_id":1,"user_id":42,"order":"/api/v1/products/1/orders/42"}`, "Location"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeT{TB: t}
			c := client.New(answer(t, tt.status, tt.header, tt.body), &client.Options{HTTPClient: contract.Client(ft, nil)})
			_, _ = c.Purchase(context.Background(), 1, 42)
			got := ft.end()
			t.Logf("report: %s", got)
			switch {
			case tt.want == "" && got != "":
				t.Errorf("a good answer was reported: %s", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Errorf("report = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

// TestRequests: a request the description refuses must be refused (any 4xx); one that is
// answered 2xx all the same is reported. So is an unknown route answered as if it were one.
func TestRequests(t *testing.T) {
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		header                   map[string]string
		answer, want             string
	}{
		{"refused", "POST", "/api/v1/products/1/purchase", `{"user_id":0}`, 400, problemCT, problem("invalid_request", 400), ""},
		{"bought", "POST", "/api/v1/products/1/purchase", `{"user_id":0}`, 201, nil, order, "was not refused"},
		{"unknown field bought", "POST", "/api/v1/products/1/purchase", `{"user_id":4,"x":1}`, 201, nil, order, "was not refused"},
		{"admin without token", "GET", "/api/v1/products/1/audit", ``, 200, nil, audit, "was not refused"},
		{"no such route", "GET", "/api/v2/x", ``, 404, problemCT, problem("not_found", 404), ""},
		{"no such route, 200", "GET", "/api/v2/x", ``, 200, nil, `{}`, "GET /api/v2/x -> 200"},
		{"a trailing slash", "GET", "/api/v1/products/1/", ``, 404, problemCT, problem("not_found", 404), ""},
		{"a trailing slash, 200", "GET", "/api/v1/products/1/", ``, 200, nil, `{"id":1}`, "GET /api/v1/products/1/ -> 200"},
		{"wrong method", "DELETE", "/api/v1/products/1", ``, 405, problemCT, problem("method_not_allowed", 405), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ft := &fakeT{TB: t}
			base := answer(t, tt.status, tt.header, tt.answer)
			req, err := http.NewRequest(tt.method, base+tt.path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := contract.Client(ft, nil).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != tt.answer {
				t.Errorf("body handed on = %q, want %q", b, tt.answer)
			}
			got := ft.end()
			t.Logf("report: %s", got)
			switch {
			case tt.want == "" && got != "":
				t.Errorf("a good exchange was reported: %s", got)
			case tt.want != "" && !strings.Contains(got, tt.want):
				t.Errorf("report = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}
