package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
)

// The API itself answers the client in internal/app's tests (TestContract and every test
// that buys). The servers here stand in for what is not the API: a proxy in front of it, a
// server that is gone, and a recorder of what the client sends.

// front serves every request with status, Content-Type ctype, Retry-After retry and body.
func front(t *testing.T, status int, ctype, retry, body string) *client.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ctype)
		if retry != "" {
			w.Header().Set("Retry-After", retry)
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return client.New(srv.URL+"/", nil)
}

// TestNotAProblem: an answer that is not a problem (by its Content-Type) is a Problem with
// the status, its Retry-After and no code, whose detail tells what the body said.
func TestNotAProblem(t *testing.T) {
	long := strings.Repeat("é", 150)
	for _, tt := range []struct {
		name, ctype, body string
		status            int
		detail            string
	}{
		{"proxy page", "text/html", "<html>502 Bad Gateway</html>\n", 502, "<html>502 Bad Gateway</html>"},
		{"long body", "text/plain", long, 503, long[:200] + "..."},
		{"problem sent as json", "application/json", `{"status":409,"code":"sold_out"}`, 409, `{"status":409,"code":"sold_out"}`},
		{"not ready", "application/json; charset=utf-8",
			`{"checks":{"postgres":"ok","redis":"unavailable","serving":"unavailable"},"status":"unavailable"}`, 503,
			"not ready: redis unavailable, serving unavailable"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := front(t, tt.status, tt.ctype, "7", tt.body)
			_, err := c.Purchase(context.Background(), 1, 2)
			var p *api.Problem
			if !errors.As(err, &p) {
				t.Fatalf("Purchase = %v, want an *api.Problem", err)
			}
			if p.Status != tt.status || p.Code != "" || p.Detail != tt.detail || p.RetryAfter != "7" || p.Title != http.StatusText(tt.status) {
				t.Errorf("problem = %+v, want status %d, no code, detail %q, Retry-After 7", p, tt.status, tt.detail)
			}
		})
	}
}

// TestProblem: a problem body is the error, with the response's status and Retry-After,
// behind the request's method and path.
func TestProblem(t *testing.T) {
	c := front(t, 503, "application/problem+json", "1",
		`{"type":"https://github.com/seckill/seckill#error-busy","title":"Service Unavailable","status":503,"code":"busy","detail":"retry shortly"}`)
	err := c.Ready(context.Background())
	var p *api.Problem
	if !errors.As(err, &p) || p.Code != api.CodeBusy || p.Status != 503 || p.RetryAfter != "1" || p.Detail != "retry shortly" {
		t.Fatalf("Ready = %v (%+v), want the busy problem", err, p)
	}
	if got, want := err.Error(), "GET /readyz: 503 busy: retry shortly"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
}

// TestReadiness: a 200's body is returned, with each check and its state.
func TestReadiness(t *testing.T) {
	r, err := front(t, 200, "application/json", "", `{"checks":{"etcd":"ok","postgres":"ok"},"status":"ok"}`).Readiness(context.Background())
	if err != nil || r.Status != api.StateOK || len(r.Checks) != 2 || r.Checks["etcd"] != api.StateOK {
		t.Fatalf("Readiness = %+v, %v; want both checks ok", r, err)
	}
}

// TestNoAnswer: when no answer comes, or it cannot be read, the error is not a Problem and
// wraps its cause.
func TestNoAnswer(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	if _, err := client.New(srv.URL, nil).Product(context.Background(), 1); err == nil || errors.As(err, new(*api.Problem)) {
		t.Errorf("Product from a closed server = %v, want a transport error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := front(t, 200, "application/json", "", `{}`).Audit(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Audit with a cancelled context = %v, want context.Canceled", err)
	}
	_, err := front(t, 200, "application/json", "", `not json`).OrderOf(context.Background(), 1, 2)
	if err == nil || errors.As(err, new(*api.Problem)) || !strings.HasPrefix(err.Error(), "GET /api/v1/products/1/orders/2: decode answer") {
		t.Errorf("OrderOf with a body that is not JSON = %v, want a decode error", err)
	}
}

// TestRequests: each method's request, the admin token on admin routes only, and with
// BuyerToken the named user's token on the buyer routes only; a token that cannot be had
// sends nothing.
func TestRequests(t *testing.T) {
	var (
		mu  sync.Mutex
		got []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, strings.TrimSpace(r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization")+" "+string(body)))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	c := client.New(srv.URL, &client.Options{AdminToken: "tok"})
	errNoKey := errors.New("no key")
	b := client.New(srv.URL, &client.Options{AdminToken: "tok", BuyerToken: func(_ context.Context, user int64) (string, error) {
		if user == 13 {
			return "", errNoKey
		}
		return fmt.Sprintf("user-%d", user), nil
	}})
	ctx := context.Background()
	if _, err := b.Purchase(ctx, 3, 13); !errors.Is(err, errNoKey) {
		t.Errorf("Purchase with no token to be had = %v, want its error", err)
	}
	for _, err := range []error{
		first(c.CreateProduct(ctx, api.NewProduct{Name: "w", Stock: new(0)})),
		first(c.Product(ctx, 3)),
		first(c.Purchase(ctx, 3, 9)),
		first(c.OrderOf(ctx, 3, 9)),
		first(c.Audit(ctx, 3)),
		c.Ready(ctx),
		first(b.Product(ctx, 3)),
		first(b.Purchase(ctx, 3, 9)),
		first(b.PurchaseBundle(ctx, 8, 3, 4)),
		first(b.OrderOf(ctx, 3, 9)),
		first(b.Pay(ctx, 3, 9)),
		first(b.Cancel(ctx, 3, 9)),
		first(b.Audit(ctx, 3)),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		`POST /api/v1/products Bearer tok {"name":"w","stock":0,"strategy":"","think_ms":0}`,
		`GET /api/v1/products/3`,
		`POST /api/v1/products/3/purchase  {"user_id":9}`,
		`GET /api/v1/products/3/orders/9`,
		`GET /api/v1/products/3/audit Bearer tok`,
		`GET /readyz`,
		`GET /api/v1/products/3`,
		`POST /api/v1/products/3/purchase Bearer user-9 {"user_id":9}`,
		`POST /api/v1/bundles/purchase Bearer user-8 {"user_id":8,"product_ids":[3,4]}`,
		`GET /api/v1/products/3/orders/9 Bearer user-9`,
		`POST /api/v1/products/3/orders/9/pay Bearer user-9`,
		`POST /api/v1/products/3/orders/9/cancel Bearer user-9`,
		`GET /api/v1/products/3/audit Bearer tok`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func first[T any](_ T, err error) error { return err }

// TestAwaitDrainedNotAQueue: the audit of a product that is not a queue product has no queue
// figures, and AwaitDrained says so at once instead of waiting out its context.
func TestAwaitDrainedNotAQueue(t *testing.T) {
	c := front(t, http.StatusOK, "application/json", "", `{"product_id":3,"consistent":true}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.AwaitDrained(ctx, 3, time.Millisecond); err == nil || ctx.Err() != nil ||
		!strings.Contains(err.Error(), "no queue figures") {
		t.Fatalf("AwaitDrained of a product without queue figures = %v (ctx %v)", err, ctx.Err())
	}
}
