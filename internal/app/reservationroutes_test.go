package app_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/order"
)

// TestReservationRoutes: pay and cancel over HTTP answer every refusal with its 4xx code, the
// order named, and never a 5xx; every exchange is checked against the OpenAPI contract.
func TestReservationRoutes(t *testing.T) {
	t.Parallel()
	s := newStack(t, order.Config{SweepInterval: -1})
	ctx := context.Background()
	one, window := 1, 60_000
	if _, err := s.API.CreateProduct(ctx, api.NewProduct{Name: "n", Stock: &one, Strategy: "naive", PayWithinMS: window}); !isCode(err, api.CodeInvalidRequest) {
		t.Fatalf("naive product with a window: %v, want 400 invalid_request", err)
	}
	p, err := s.API.CreateProduct(ctx, api.NewProduct{Name: "r", Stock: &one, PayWithinMS: window})
	if err != nil || p.PayWithinMS != window {
		t.Fatalf("create = %+v, %v", p, err)
	}
	o, err := s.API.Purchase(ctx, p.ID, 7)
	if err != nil || o.Status != api.StatusPending || o.PayBy == nil {
		t.Fatalf("purchase = %+v, %v; want pending with pay_by", o, err)
	}
	if _, err := s.API.Pay(ctx, p.ID+1000, 7); !isCode(err, api.CodeProductNotFound) {
		t.Errorf("pay, no product: %v", err)
	}
	if _, err := s.API.Cancel(ctx, p.ID, 8); !isCode(err, api.CodeOrderNotFound) {
		t.Errorf("cancel, no order: %v", err)
	}
	for _, path := range []string{"/orders/0/pay", "/orders/x/cancel"} {
		if status, code, _, _, err := s.do(http.MethodPost, fmt.Sprintf("/api/v1/products/%d%s", p.ID, path), "", ""); err != nil || status != 400 || code != api.CodeInvalidRequest {
			t.Errorf("POST %s = %d %s, %v; want 400 invalid_request", path, status, code, err)
		}
	}
	if paid, err := s.API.Pay(ctx, p.ID, 7); err != nil || paid.Status != api.StatusPaid || paid.PaidAt == nil {
		t.Fatalf("pay = %+v, %v", paid, err)
	}
	var prob *api.Problem
	if _, err := s.API.Cancel(ctx, p.ID, 7); !errors.As(err, &prob) || prob.Code != api.CodeOrderPaid || prob.OrderID != o.ID {
		t.Fatalf("cancel a paid order: %v, want 409 order_paid naming order %d", err, o.ID)
	}
	if got, err := s.API.OrderOf(ctx, p.ID, 7); err != nil || got.Status != api.StatusPaid {
		t.Fatalf("lookup = %+v, %v", got, err)
	}
}

// isCode reports whether err is a problem with code.
func isCode(err error, code string) bool {
	var p *api.Problem
	return errors.As(err, &p) && p.Code == code
}
