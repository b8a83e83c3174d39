package app_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/order"
)

// TestLabEtcdWithoutEtcd: a lab product whose lock is etcd's, in an API process that has no
// etcd, is answered 503 unavailable (not busy, not a 500), and the error behind it names
// ETCD_ENDPOINTS; nothing is written.
func TestLabEtcdWithoutEtcd(t *testing.T) {
	t.Parallel()
	s := newStack(t, order.Config{})
	stock := 3
	p, err := s.API.CreateProduct(context.Background(), api.NewProduct{Name: "lab", Stock: &stock, Strategy: "lab", Lock: "etcd"})
	if err != nil {
		t.Fatal(err)
	}
	status, code, err := s.purchase(p.ID, 1)
	if err != nil || status != http.StatusServiceUnavailable || code != api.CodeUnavailable {
		t.Fatalf("purchase = %d %q %v, want 503 %s", status, code, err, api.CodeUnavailable)
	}
	_, err = s.App.Orders.Purchase(context.Background(), p.ID, 2)
	if !errors.Is(err, order.ErrUnavailable) || !strings.Contains(err.Error(), "ETCD_ENDPOINTS") {
		t.Errorf("purchase = %v, want ErrUnavailable naming ETCD_ENDPOINTS", err)
	}
	checkAudit(t, s.audit(t, p.ID), 0)
}
