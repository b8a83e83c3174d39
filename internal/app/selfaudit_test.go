package app_test

import (
	"bufio"
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/testenv"
)

// TestSelfAudit: the API audits its products on sale every SelfAudit.Every and exports how
// many are inconsistent. A product whose stock and orders stop adding up counts at once; a
// Redis gate that disagrees with PostgreSQL counts once it disagrees the same way two rounds
// in a row; a naive product (it oversells by design) never counts. Mending each brings the
// gauge back to 0.
func TestSelfAudit(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	rdb, prefix := testenv.Redis(t)
	s := serve(t, app.Config{DB: gdb, Redis: rdb, RedisPrefix: prefix, AdminToken: adminToken,
		SelfAudit: app.SelfAuditConfig{Every: 100 * time.Millisecond}})
	ctx := context.Background()
	ids := map[string]int64{}
	for _, strategy := range []string{"dlock", "redis", "naive"} {
		p, err := s.API.CreateProduct(ctx, api.NewProduct{Name: strategy, Stock: new(5), Strategy: strategy})
		if err != nil {
			t.Fatal(err)
		}
		ids[strategy] = p.ID
		if _, err := s.API.Purchase(ctx, p.ID, 1); err != nil {
			t.Fatalf("purchase %s: %v", strategy, err)
		}
	}
	metric := func(name string) float64 {
		resp, err := http.Get(s.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
			if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				return f
			}
		}
		return -1
	}
	exec := func(sql string, args ...any) {
		t.Helper()
		if err := gdb.Exec(sql, args...).Error; err != nil {
			t.Fatal(err)
		}
	}
	settled := func(want float64, what string) {
		t.Helper()
		rounds := metric(`seckill_audit_rounds_total{result="ok"}`)
		testenv.Eventually(t, 10*time.Second, what, func() bool {
			// Three rounds after the change: a gate's disagreement counts at the second.
			return metric(`seckill_audit_rounds_total{result="ok"}`) >= rounds+3 && metric("seckill_audit_inconsistent_products") == want
		})
	}

	settled(0, "a healthy sale: 0 inconsistent")
	if got := metric("seckill_audit_products"); got != 2 {
		t.Errorf("seckill_audit_products = %v, want 2 (dlock and redis; naive is not audited)", got)
	}
	exec(`UPDATE products SET stock = stock - 1 WHERE id = ?`, ids["naive"])
	settled(0, "a naive product that does not add up: not counted")

	exec(`UPDATE products SET stock = stock - 1 WHERE id = ?`, ids["dlock"])
	settled(1, "a dlock product whose stock and orders do not add up: 1 inconsistent")
	exec(`UPDATE products SET stock = stock + 1 WHERE id = ?`, ids["dlock"])
	settled(0, "mended: 0")

	gate := s.App.Keys.GateStock(ids["redis"])
	if err := rdb.DecrBy(ctx, gate, 2).Err(); err != nil {
		t.Fatal(err)
	}
	settled(1, "a gate 2 units below PostgreSQL with nothing pending: 1 inconsistent")
	if err := rdb.IncrBy(ctx, gate, 2).Err(); err != nil {
		t.Fatal(err)
	}
	settled(0, "mended: 0")
}
