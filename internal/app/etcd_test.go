package app_test

import (
	"context"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// newEtcdStackOn serves an API process whose product locks live in the etcd of cli, over the
// database and Redis prefix of s (or its own when s is nil).
func newEtcdStackOn(t testing.TB, s *stack, cli *clientv3.Client) *stack {
	t.Helper()
	cfg := app.Config{AdminToken: adminToken, Order: order.Config{LockWait: 2 * time.Second}, Etcd: cli, LocksInEtcd: true}
	if s == nil {
		cfg.DB = testenv.Postgres(t)
		cfg.Redis, cfg.RedisPrefix = testenv.Redis(t)
	} else {
		cfg.DB, cfg.Redis, cfg.RedisPrefix = s.DB, s.Redis, s.Prefix
	}
	cfg.Logger = failLog(t)
	return serve(t, cfg)
}

// TestEtcdBackendNoOversell: two API processes with their product locks in etcd sell a
// dlock product (fair or not) and bundles to a crowd: every answer is bought, sold out or
// busy, and the audit holds.
func TestEtcdBackendNoOversell(t *testing.T) {
	t.Parallel()
	const stock, buyers = 100, 600
	first := newEtcdStackOn(t, nil, testenv.Etcd(t))
	stacks := []*stack{first, newEtcdStackOn(t, first, testenv.Etcd(t))}
	for _, strategy := range []string{"dlock", "dlock-fair"} {
		t.Run(strategy, func(t *testing.T) { sellToCrowd(t, stacks, strategy, stock, buyers) })
	}
	t.Run("bundle", func(t *testing.T) {
		a, b := first.createProduct(t, 5, "dlock", 0), first.createProduct(t, 5, "dlock", 0)
		for u := int64(1); u <= 5; u++ {
			if _, err := stacks[u%2].API.PurchaseBundle(context.Background(), u, a.ID, b.ID); err != nil {
				t.Fatalf("bundle of user %d: %v", u, err)
			}
		}
		checkAudit(t, first.audit(t, a.ID), 5)
		checkAudit(t, first.audit(t, b.ID), 5)
	})
}

// TestEtcdBackendDown: with the product locks in an etcd that does not answer, a purchase
// of a dlock product is 503 unavailable with Retry-After (not busy, not 500), nothing is
// written, /readyz stays 200 (this process can serve) and ?full=1 is 503 naming etcd alone;
// the other strategies still sell.
func TestEtcdBackendDown(t *testing.T) {
	t.Parallel()
	s := newEtcdStackOn(t, nil, testenv.Etcd(t, "http://"+testenv.FreeAddr(t)))
	p := s.createProduct(t, 5, "dlock", 0)
	status, _, body, header, err := s.do(http.MethodPost, "/api/v1/products/"+strconv.FormatInt(p.ID, 10)+"/purchase", "", `{"user_id":1}`)
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusServiceUnavailable || !strings.Contains(string(body), api.CodeUnavailable) || header.Get("Retry-After") == "" {
		t.Errorf("purchase with etcd down = %d %s (Retry-After %q), want 503 %s with Retry-After",
			status, body, header.Get("Retry-After"), api.CodeUnavailable)
	}
	if a := s.audit(t, p.ID); a.Orders != 0 || a.Stock != 5 {
		t.Errorf("audit after the refused purchase = %+v, want nothing written", a)
	}
	// Only etcd is reported down: its check hangs to the deadline, and the others, run at
	// the same time, are not starved of it.
	want := map[string]string{"etcd": api.StateUnavailable, "postgres": api.StateOK, "redis": api.StateOK, "serving": api.StateOK}
	for path, wantStatus := range map[string]int{"/readyz": http.StatusOK, "/readyz?full=1": http.StatusServiceUnavailable} {
		status, _, body, _, err = s.do(http.MethodGet, path, "", "")
		var ready api.Readiness
		mustJSON(t, body, &ready)
		if err != nil || status != wantStatus || !maps.Equal(ready.Checks, want) {
			t.Errorf("%s with etcd down = %d %s, %v; want %d with checks %v", path, status, body, err, wantStatus, want)
		}
	}
	other := s.createProduct(t, 5, "pessimistic", 0)
	if status, code, err := s.purchase(other.ID, 1); err != nil || status != http.StatusCreated {
		t.Errorf("a pessimistic purchase with etcd down = %d %s, %v; want 201", status, code, err)
	}
}

// failLog is a logger of the API's warnings and errors, whose last lines are printed with
// the test's log if the test fails (the 503s of a failed etcd sale say why in them).
func failLog(t testing.TB) *slog.Logger {
	w := &testenv.Buffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("API log (warnings and errors, last lines):\n%s", w.Tail(60))
		}
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
