package app_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/testenv"
)

// TestProductionSellsNoTeaching: the production service (nothing plugged in) refuses an admin
// who creates a product of a teaching strategy (naive, lab), of a strategy nobody knows, or with
// think_ms, 400 invalid_request; and a teaching product that reached its database anyway is
// never sold by another strategy: a purchase is refused 400 too, and writes nothing.
func TestProductionSellsNoTeaching(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	rdb, prefix := testenv.Redis(t)
	s := serve(t, app.Config{DB: gdb, Redis: rdb, RedisPrefix: prefix, AdminToken: adminToken, Plug: production})
	ctx := context.Background()
	stock := 3
	for _, np := range []api.NewProduct{
		{Name: "naive", Stock: &stock, Strategy: "naive"},
		{Name: "lab", Stock: &stock, Strategy: "lab", Lock: "none"},
		{Name: "unknown", Stock: &stock, Strategy: "spin"},
		{Name: "think", Stock: &stock, ThinkMS: 5},
	} {
		_, err := s.API.CreateProduct(ctx, np)
		var p *api.Problem
		if !errors.As(err, &p) || p.Status != http.StatusBadRequest || p.Code != api.CodeInvalidRequest {
			t.Errorf("create %s: %v, want 400 %s", np.Name, err, api.CodeInvalidRequest)
		}
	}
	p := s.createProduct(t, stock, "dlock", 0)
	mustExecApp(t, gdb, `UPDATE products SET strategy = 'naive' WHERE id = ?`, p.ID)
	status, code, err := s.purchase(p.ID, 1)
	if err != nil || status != http.StatusBadRequest || code != api.CodeInvalidRequest {
		t.Fatalf("purchase of a naive product = %d %q %v, want 400 %s", status, code, err, api.CodeInvalidRequest)
	}
	checkAudit(t, s.audit(t, p.ID), 0)
}
