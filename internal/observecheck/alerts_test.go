package observecheck_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// timeScale divides the durations of the alert test's copy of the rules: a minute of the
// rules is 4 s of the test.
const timeScale = 15

// TestAlertsReachTheWebhook runs the alerting path end to end: three API processes behind
// HAProxy, on a Redis of the test's own, a Prometheus that scrapes them and HAProxy every
// second with the rules of deploy/prometheus (a copy whose durations are divided by 15 and
// without the slow burn-rate alerts, whose 2 h window would outlast the test: promtool tests
// those), and Alertmanager with deploy/alertmanager's routing, posting to a webhook of the
// test's. Purchases flow through HAProxy all along. It stops Redis, sees the alerts of a Redis
// outage arrive at the webhook and resolve once Redis is back, then kills a replica, sees
// SeckillReplicaDown arrive and resolve once it is back; no other alert arrives, and each
// arrives at the receiver of its severity.
func TestAlertsReachTheWebhook(t *testing.T) {
	for _, bin := range []func(testing.TB) string{servers.PrometheusBin, servers.AlertmanagerBin, servers.HAProxyBin} {
		bin(t)
	}
	rds := servers.StartRedis(t)
	dsn := testenv.Schema(t)
	const token = "observecheck-admin-token"
	apis := servers.StartAPIs(t, 3, map[string]string{
		"DATABASE_URL": dsn, "REDIS_ADDR": rds.Addr, "ADMIN_TOKEN": token, "LOG_LEVEL": "error",
		"DB_MAX_CONNS": "5", "SELF_AUDIT_INTERVAL": "2s",
	})
	var targets []string
	for _, a := range apis {
		targets = append(targets, strings.TrimPrefix(a.Base, "http://"))
	}
	lb := servers.StartHAProxy(t, targets, nil)
	hook := startWebhook(t)
	am := servers.StartAlertmanager(t, alertmanagerConfig(t, hook.URL))
	prom := servers.StartPrometheus(t, map[string]string{
		"rules/seckill.rules.yml": "groups: []\n",
		"prometheus.yml": fmt.Sprintf(`global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [rules/seckill.rules.yml]
alerting:
  alertmanagers: [{static_configs: [{targets: ["%s"]}]}]
scrape_configs:
  - job_name: seckill-api
    static_configs: [{targets: ["%s"]}]
  - job_name: haproxy
    static_configs: [{targets: ["%s"]}]
`, am.Addr, strings.Join(targets, `", "`), lb.Stats),
	})
	q := &querier{t: t, base: prom.URL}
	q.awaitScraped(len(apis))
	// The rules only now: before its first scrapes, Prometheus sees no replica at all.
	rules, err := os.ReadFile(filepath.Join(deploy, "prometheus/rules/seckill.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	scaled := scaleDurations(t, string(rules), timeScale)
	scaled = dropAlert(t, dropAlert(t, scaled, "SeckillErrorBudgetBurnSlow"), "SeckillLatencyBudgetBurnSlow")
	if err := os.WriteFile(filepath.Join(prom.Dir, "rules/seckill.rules.yml"), []byte(scaled), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := prom.Reload(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "Prometheus loads the rules", func() bool {
		var res struct {
			Data struct{ Groups []struct{ Rules []rule } }
		}
		q.get("/api/v1/rules", &res)
		return len(res.Data.Groups) == 4
	})

	ctx := context.Background()
	admin := client.New(apis[0].Base, &client.Options{AdminToken: token})
	var products []int64
	for i := range 20 {
		p, err := admin.CreateProduct(ctx, api.NewProduct{Name: fmt.Sprintf("alerted %d", i), Stock: new(100000)})
		if err != nil {
			t.Fatal(err)
		}
		products = append(products, p.ID)
	}
	tr := startTraffic(t, lb.Base, products)
	time.Sleep(8 * time.Second)
	if got := hook.names(); len(got) > 0 {
		t.Fatalf("alerts arrived during a healthy sale: %v", got)
	}

	// Redis stops. Readiness is each replica's own (issue #45): they stay in HAProxy's
	// rotation and answer the purchases that need Redis 503 unavailable themselves. The
	// purchases pause while the replicas find out, so that no answer depends on that race.
	tr.pause()
	rds.Stop()
	time.Sleep(3 * time.Second) // the replicas' backend checks (every 2 s) see it
	for _, s := range lb.States() {
		if !strings.HasPrefix(s, "UP") {
			t.Fatalf("a Redis outage took a replica out of HAProxy's rotation (%v): readiness must be the replica's own", lb.States())
		}
	}
	want := []string{"SeckillBackendDown", "SeckillErrorBudgetBurn", "SeckillHTTP5xx", "SeckillLB5xx",
		"SeckillRateLimiterFailOpen", "SeckillUnavailable"}
	t.Logf("Redis stopped; expecting %v", want)
	tr.resume()
	awaitFiring(t, hook, want, 40*time.Second)
	holdFault(t, hook, want)
	rds.Start()
	// SeckillErrorBudgetBurn's slower pair of windows (6 h and 30 min, 24 min and 2 min here)
	// holds the outage for its short window's length after it ends.
	awaitResolved(t, hook, 150*time.Second)
	t.Logf("answers so far: %v", tr.snapshot())

	// A replica dies.
	apis[2].Kill()
	want = append(want, "SeckillReplicaDown")
	awaitFiring(t, hook, want, 30*time.Second)
	holdFault(t, hook, want)
	if got := hook.firingNames(); !slices.Equal(got, []string{"SeckillReplicaDown"}) {
		t.Errorf("firing after the kill: %v, want SeckillReplicaDown alone", got)
	}
	apis[2].Restart()
	apis[2].WaitReady("/readyz")
	awaitResolved(t, hook, 30*time.Second)
	time.Sleep(3 * time.Second) // anything late
	checkNotices(t, hook, want)
}

// alertmanagerConfig is deploy/alertmanager/alertmanager.yml with its webhooks at url and its
// waits cut to a second.
func alertmanagerConfig(t *testing.T, url string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deploy, "alertmanager/alertmanager.yml"))
	if err != nil {
		t.Fatal(err)
	}
	config := string(b)
	for _, r := range [][2]string{{"http://webhook.invalid", url}, {"group_wait: 10s", "group_wait: 1s"},
		{"group_interval: 1m", "group_interval: 1s"}, {"repeat_interval: 4h", "repeat_interval: 1h"}} {
		if !strings.Contains(config, r[0]) {
			t.Fatalf("deploy/alertmanager/alertmanager.yml has no %q to replace for the test", r[0])
		}
		config = strings.ReplaceAll(config, r[0], r[1])
	}
	return config
}

// awaitFiring waits until every alert named in want has fired, and fails the test if an
// alert not in want arrives first.
func awaitFiring(t *testing.T, hook *webhook, want []string, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		got := hook.names()
		for _, n := range got {
			if !slices.Contains(want, n) {
				t.Fatalf("alert %s arrived, not one of %v; notices: %v", n, want, hook.all())
			}
		}
		if len(got) == len(want) {
			t.Logf("arrived: %v", got)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("within %v arrived %v, want %v", d, got, want)
		}
	}
}

// holdFault keeps a fault on 10 s more, longer than the scaled `for:` of every alert but
// those of 5 minutes and more (8 s for 2 minutes), and fails the test if an alert not in want
// arrives meanwhile: an alert that needs longer to fire than the fault lasts would go unseen.
func holdFault(t *testing.T, hook *webhook, want []string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, n := range hook.names() {
			if !slices.Contains(want, n) {
				t.Fatalf("alert %s arrived, not one of %v; notices: %v", n, want, hook.all())
			}
		}
	}
}

// awaitResolved waits until every alert that arrived has been told resolved.
func awaitResolved(t *testing.T, hook *webhook, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(100 * time.Millisecond) {
		firing := hook.firingNames()
		if len(firing) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still firing %v after %v", firing, d)
		}
	}
}

// checkNotices: the alerts that arrived are those of want, each at the receiver of its
// severity, and each ended resolved.
func checkNotices(t *testing.T, hook *webhook, want []string) {
	t.Helper()
	slices.Sort(want)
	if got := hook.names(); !slices.Equal(got, want) {
		t.Errorf("alerts arrived: %v, want %v", got, want)
	}
	for _, n := range hook.all() {
		receiver := map[string]string{"critical": "/seckill/page", "warning": "/seckill/ticket"}[n.labels["severity"]]
		if n.path != receiver {
			t.Errorf("%s (%s) posted to %s, want %s", n.name(), n.labels["severity"], n.path, receiver)
		}
	}
	for k, n := range hook.state() {
		if n.status != "resolved" {
			t.Errorf("%s: last told %s", k, n.status)
		}
	}
}
