package app_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// TestOrderLookup: a buyer who is not sure whether a purchase went through can find out two
// ways, for every strategy: a retried purchase answers 409 already_purchased with the
// order's id, and GET /api/v1/products/{id}/orders/{user_id} answers 200 with the order, or
// 404 order_not_found.
func TestOrderLookup(t *testing.T) {
	t.Parallel()
	s := newStack(t, order.Config{})
	for _, strategy := range append(safeStrategies, "naive") {
		t.Run(strategy, func(t *testing.T) {
			p := s.createProduct(t, 5, strategy, 0)
			ctx := context.Background()
			bought, err := s.API.Purchase(ctx, p.ID, 7)
			if err != nil {
				t.Fatalf("purchase: %v", err)
			}

			_, err = s.API.Purchase(ctx, p.ID, 7)
			var again *api.Problem
			if !errors.As(err, &again) || again.Status != http.StatusConflict || again.Code != api.CodeAlreadyPurchased || again.OrderID != bought.ID {
				t.Fatalf("retried purchase = %v, want 409 already_purchased with order_id %d", err, bought.ID)
			}

			found, err := s.API.OrderOf(ctx, p.ID, 7)
			if err != nil || found.ID != bought.ID || found.UserID != 7 || found.ProductID != p.ID {
				t.Fatalf("lookup = %+v %v, want order %d", found, err, bought.ID)
			}
			_, err = s.API.OrderOf(ctx, p.ID, 8)
			var none *api.Problem
			if !errors.As(err, &none) || none.Status != http.StatusNotFound || none.Code != api.CodeOrderNotFound {
				t.Fatalf("lookup of a user without an order = %v", err)
			}
		})
	}
	for path, want := range map[string]string{
		"/api/v1/products/999999/orders/1": "404 " + api.CodeProductNotFound,
		"/api/v1/products/1/orders/0":      "400 " + api.CodeInvalidRequest,
		"/api/v1/products/1/orders/x":      "400 " + api.CodeInvalidRequest,
		"/api/v1/products/0/orders/1":      "400 " + api.CodeInvalidRequest,
	} {
		if status, code, body, _, _ := s.do(http.MethodGet, path, "", ""); fmt.Sprintf("%d %s", status, code) != want {
			t.Errorf("GET %s = %d %s, want %s", path, status, body, want)
		}
	}
}

// TestClientGoneIsNotAnError: a client that disconnects in the middle of its purchase is not
// a failure of the service: no 500, no error line in the log, its own outcome in the
// metrics ("canceled"), a debug line.
func TestClientGoneIsNotAnError(t *testing.T) {
	t.Parallel()
	logs := &testenv.Buffer{}
	gdb := testenv.Postgres(t)
	rdb, prefix := testenv.Redis(t)
	s := serve(t, app.Config{DB: gdb, Redis: rdb, RedisPrefix: prefix, AdminToken: adminToken,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	// The buyer gives up while the purchase thinks (3 s), after the product was read (1 s is
	// ample for that, also on a loaded machine: the metric is labelled with its strategy).
	p := s.createProduct(t, 5, "optimistic", 3000)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := s.API.Purchase(ctx, p.ID, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("purchase that the client gave up on = %v", err)
	}
	testenv.Eventually(t, 10*time.Second, "the log line of the client going away", func() bool {
		return strings.Contains(logs.String(), "client went away")
	})
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("a client going away was logged as an error:\n%s", logs)
	}
	_, _, metrics, _, _ := s.do(http.MethodGet, "/metrics", "", "")
	if !strings.Contains(string(metrics), `seckill_purchases_total{outcome="canceled",strategy="optimistic"} 1`) {
		t.Errorf("no canceled purchase in the metrics:\n%s", grepLines(string(metrics), "seckill_purchases_total"))
	}
}

func grepLines(text, substr string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
