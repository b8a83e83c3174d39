package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestLifecycleAuditReadsPostgreSQL runs a small abandonment sale on two real API processes
// through Execute, which must pay out with the equality holding in PostgreSQL, and draw its
// picture in the -plot page; then, the
// negative control, one unit is added to the product's stock column behind the service's
// back, and the direct audit of the reservations must say the equality is broken.
func TestLifecycleAuditReadsPostgreSQL(t *testing.T) {
	testenv.SkipShort(t, "two API processes")
	dsn := testenv.Schema(t)
	_, prefix := testenv.Redis(t)
	const token = "lifecycle-test-admin-token"
	var targets []string
	for _, a := range servers.StartAPIs(t, 2, map[string]string{"DATABASE_URL": dsn, "REDIS_ADDR": testenv.RedisAddr(t),
		"REDIS_KEY_PREFIX": prefix, "ADMIN_TOKEN": token, "LOG_LEVEL": "warn", "DB_MAX_CONNS": "5"}) {
		targets = append(targets, a.Base)
	}
	cfg := DefaultConfig()
	cfg.Cmd, cfg.Targets, cfg.AdminToken, cfg.Strategies, cfg.StrategyFlag = "run", targets, token, []string{"optimistic"}, "-strategy"
	// Bounds, not expectations: the sale pays out in about 5 s; a loaded machine may take longer.
	cfg.Stock, cfg.Rate, cfg.Duration, cfg.Requests, cfg.Progress, cfg.Seed = 8, 40, 90*time.Second, 3600, 0, 3
	cfg.DatabaseURL, cfg.RedisAddr, cfg.RedisPrefix = dsn, testenv.RedisAddr(t), prefix
	cfg.Abandon = Abandon{PayWithin: 700 * time.Millisecond, PayRatio: 0.6, PayDelay: 300 * time.Millisecond}
	dir := t.TempDir()
	cfg.JSONPath, cfg.PlotPath = filepath.Join(dir, "run.json"), filepath.Join(dir, "run.html")
	if err := cfg.Complete(); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := Execute(context.Background(), cfg, nil, &stdout, &stderr); err != nil {
		t.Fatalf("Execute: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(cfg.JSONPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	r := rep.Rounds[0][0]
	l := r.Lifecycle
	if l == nil || l.StopReason != StopPaidOut || l.Audit.Source != ranDatabase || l.Audit.Paid != 8 || len(l.Problems) > 0 {
		t.Fatalf("lifecycle %+v, want paid out, audited in PostgreSQL\n%s\n%s", l, stdout.String(), stderr.String())
	}

	if page, err := os.ReadFile(cfg.PlotPath); err != nil || !regexp.MustCompile(`(?s)<svg class="lifecycle".*</body>`).Match(page) {
		t.Errorf("the -plot page (%v) lacks the sale's picture above its end", err)
	}

	aud, err := newAuditor(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer aud.close()
	if _, err := aud.pg.Exec(`UPDATE products SET stock = stock + 1 WHERE id = $1`, r.ProductID); err != nil {
		t.Fatal(err)
	}
	a, err := directLifecycle(context.Background(), aud.pg, r.ProductID)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(checkLifecycle(a, l.Payers, true), "; ")
	if !strings.Contains(got, "stock 1 + pending 0 + paid 8 = 9, not the initial stock 8") {
		t.Errorf("checkLifecycle after a unit was added behind the service's back = %q, want the broken equality", got)
	}
}
