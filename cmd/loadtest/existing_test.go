package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestExistingProductAndAuditSources runs `loadtest run` against a real API process on a
// fresh schema and key prefix. -product buys a product that already sold 5 of its 30 units:
// the run sells the 25 left, the verdict counts its own orders alone, the report says it
// bought an existing product; a missing or sold-out product is refused. Without PostgreSQL
// (no -database-url, or one out of reach, or -audit api) the API's audit alone judges the
// run and the report says so; -audit database with PostgreSQL out of reach cannot run.
func TestExistingProductAndAuditSources(t *testing.T) {
	dsn, redisAddr, prefix := testenv.APIBackend(t)
	t.Parallel()
	const token = "existing-product-admin-token"
	a := servers.StartAPI(t, "api", map[string]string{"DATABASE_URL": dsn, "REDIS_ADDR": redisAddr, "REDIS_KEY_PREFIX": prefix,
		"ADMIN_TOKEN": token, "LOG_LEVEL": "warn", "DB_MAX_CONNS": "5", "RATE_LIMIT_USER": "off"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := client.New(a.Base, &client.Options{AdminToken: token})
	p, err := c.CreateProduct(ctx, api.NewProduct{Name: "existing", Stock: new(30), Strategy: "dlock"})
	if err != nil {
		t.Fatal(err)
	}
	for u := int64(1); u <= 5; u++ {
		if _, err := c.Purchase(ctx, p.ID, u); err != nil {
			t.Fatalf("purchase by user %d: %v", u, err)
		}
	}
	direct := []string{"-database-url=" + dsn, "-redis-addr=" + redisAddr, "-redis-prefix=" + prefix}
	loadtest := func(args ...string) (string, string, int, loadgen.Report) {
		t.Helper()
		jsonPath := filepath.Join(t.TempDir(), "r.json")
		argv := append([]string{"loadtest", "run", "-targets=" + a.Base, "-requests=300", "-workers=8", "-progress=0",
			"-duration=30s", "-json=" + jsonPath}, args...)
		var out, errb bytes.Buffer
		err := run(ctx, argv, func(k string) string { return map[string]string{"ADMIN_TOKEN": token}[k] }, &out, &errb)
		if err != nil {
			errb.WriteString("loadtest: " + err.Error())
		}
		var rep loadgen.Report
		if exitCode(err) == exitOK {
			rep = readReport(t, jsonPath)
		}
		return out.String(), errb.String(), exitCode(err), rep
	}

	t.Run("existing product", func(t *testing.T) {
		out, errOut, code, rep := loadtest(append([]string{"-product=" + strconv.FormatInt(p.ID, 10), "-first-user=1000"}, direct...)...)
		if code != exitOK {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
		}
		r := rep.Rounds[0][0]
		if e := rep.ExistingProduct; e == nil || e.ID != p.ID || e.StockAtStart != 25 || e.InitialStock != 30 || e.Strategy != "dlock" {
			t.Errorf("existing product %+v, want product %d with 25 of 30 left", e, p.ID)
		}
		if r.ProductID != p.ID || r.Stats.Outcomes[loadgen.Bought] != 25 || r.Audit.OrdersBefore != 5 ||
			r.Audit.Direct == nil || r.Audit.Direct.Orders != 30 || !r.Verdict.OK {
			t.Errorf("run: product %d, bought %d, orders before %d, direct audit %+v, verdict %+v",
				r.ProductID, r.Stats.Outcomes[loadgen.Bought], r.Audit.OrdersBefore, r.Audit.Direct, r.Verdict)
		}
		if rep.AuditSource.Ran != "database" || !strings.Contains(out, "bought existing product "+strconv.FormatInt(p.ID, 10)+" (dlock): stock 25 of 30") {
			t.Errorf("audit source %+v; stdout:\n%s", rep.AuditSource, out)
		}
	})

	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"sold out", []string{"-product=" + strconv.FormatInt(p.ID, 10)}, exitUsage, "is not on sale: sold out (stock 0 of 30)"},
		{"missing", []string{"-product=999999999"}, exitUsage, "has no such product"},
		{"shaped", []string{"-product=" + strconv.FormatInt(p.ID, 10), "-stock=5"}, exitUsage, "-stock would shape a new one"},
		{"with -check", []string{"-product=" + strconv.FormatInt(p.ID, 10), "-check"}, exitUsage, "-product with -check"},
		{"database out of reach, -audit database", []string{"-audit=database", "-database-url=postgres://seckill:seckill@127.0.0.1:1/seckill?sslmode=disable"},
			exitHarness, "PostgreSQL for the audit"},
	} {
		out, errOut, code, _ := loadtest(tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("%s: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", tt.name, code, tt.code, tt.want, out, errOut)
		}
	}

	for _, tt := range []struct {
		name, why string
		args      []string
	}{
		{"no database", "no -database-url or DATABASE_URL", []string{"-database-url="}},
		{"database out of reach", "PostgreSQL out of reach", []string{"-database-url=postgres://seckill:seckill@127.0.0.1:1/seckill?sslmode=disable"}},
		{"-audit api", "-audit api", append([]string{"-audit=api"}, direct...)},
	} {
		out, errOut, code, rep := loadtest(append(tt.args, "-stock=10", "-strategy=redis")...)
		if code != exitOK {
			t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", tt.name, code, out, errOut)
			continue
		}
		r := rep.Rounds[0][0]
		if s := rep.AuditSource; s.Ran != "api" || !strings.Contains(s.Why, tt.why) || s.CannotProve == "" {
			t.Errorf("%s: audit source %+v", tt.name, s)
		}
		if r.Audit.API == nil || r.Audit.Direct != nil || r.Audit.API.Orders != 10 || r.Audit.API.Redis == nil || !r.Verdict.OK {
			t.Errorf("%s: audit %+v, verdict %+v: want the API's alone, 10 orders, the gate agreeing", tt.name, r.Audit, r.Verdict)
		}
		if !strings.Contains(out, "audit source  api ("+tt.why) {
			t.Errorf("%s: stdout does not say which audit ran:\n%s", tt.name, out)
		}
	}
}
