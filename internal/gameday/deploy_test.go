//go:build linux

package gameday_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/faultproxy"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// adminToken is the ADMIN_TOKEN of the game day's API processes.
const adminToken = "gameday-admin-token"

// deployment is every server of a game day, each the test's own and stopped when it ends
// (servers: also when it fails).
type deployment struct {
	etcd    *servers.Etcd
	pg      *servers.Patroni      // two nodes, synchronous_mode, each in a network namespace
	redis   *servers.Sentinels    // a master, its replica, three sentinels
	apis    []*servers.API        // api1, api2 reach PostgreSQL directly, api3 through pgLinks
	pgLinks []*faultproxy.Proxy   // api3's way to each Patroni node: stalled, it is cut off
	lb      *servers.HAProxy      // deploy/haproxy/haproxy.cfg in front of apis
	prom    *servers.Prometheus   // scrapes apis and lb, deploy/prometheus's rules scaled
	am      *servers.Alertmanager // deploy/alertmanager's routing, to hook
	hook    *webhook
	db      *sql.DB        // the judge's own pool on the cluster (its multi-host URL)
	admin   *client.Client // through the load balancer, with the admin token
}

// startDeployment starts the whole deployment and waits until Prometheus has the scaled
// rules loaded and scrapes every target.
func startDeployment(t *testing.T, log func(string, ...any)) *deployment {
	t.Helper()
	for _, bin := range []func(testing.TB) string{servers.PrometheusBin, servers.AlertmanagerBin, servers.HAProxyBin} {
		bin(t)
	}
	d := &deployment{}
	d.etcd = servers.StartEtcd(t)
	d.pg = servers.StartPatroni(t, servers.PatroniOptions{Etcd: []string{d.etcd.ClientURL}, Netns: true, Name: "gameday"})
	log("Patroni: %s is the primary, its standby synchronous", d.pg.Primary().Name)
	d.redis = servers.StartSentinels(t, nil)
	log("Redis: master %s, replica %s, sentinels %v", d.redis.Master.Addr, d.redis.Replica.Addr, d.redis.Addrs())

	dsn := d.pg.DSN()
	var hosts, links []string
	for _, n := range d.pg.Nodes {
		p := servers.StableProxy(t, n.Addr)
		d.pgLinks = append(d.pgLinks, p)
		hosts, links = append(hosts, n.Addr), append(links, p.Addr())
	}
	cutDSN := strings.Replace(dsn, strings.Join(hosts, ","), strings.Join(links, ","), 1)
	if cutDSN == dsn {
		t.Fatalf("the cluster's URL does not list its nodes as %v", hosts)
	}
	env := func(dsn string) map[string]string {
		return map[string]string{
			"DATABASE_URL": dsn, "REDIS_SENTINEL_ADDRS": strings.Join(d.redis.Addrs(), ","), "REDIS_SENTINEL_MASTER": d.redis.Name,
			"ADMIN_TOKEN": adminToken, "LOG_LEVEL": "warn", "DB_MAX_CONNS": "8",
			"SHUTDOWN_TIMEOUT": "5s", "STARTUP_TIMEOUT": "30s", "SELF_AUDIT_INTERVAL": "2s",
		}
	}
	// One at a time: each migrates the database at its start.
	for i, dsn := range []string{dsn, dsn, cutDSN} {
		d.apis = append(d.apis, servers.StartAPI(t, fmt.Sprintf("api%d", i+1), env(dsn)))
	}
	var targets []string
	for _, a := range d.apis {
		targets = append(targets, strings.TrimPrefix(a.Base, "http://"))
	}
	d.lb = servers.StartHAProxyMasterWorker(t, targets, nil)
	d.admin = client.New(d.lb.Base, &client.Options{AdminToken: adminToken})
	log("3 API processes behind HAProxy at %s", d.lb.Base)

	gdb, err := db.Open(dsn, db.PoolOptions{MaxOpen: 2})
	if err != nil {
		t.Fatal(err)
	}
	d.db, _ = gdb.DB()
	t.Cleanup(func() { d.db.Close() })

	d.hook = startWebhook(t)
	d.am = servers.StartAlertmanager(t, alertmanagerConfig(t, d.hook.URL))
	d.prom = servers.StartPrometheus(t, map[string]string{
		"rules/seckill.rules.yml": "groups: []\n",
		"prometheus.yml": fmt.Sprintf(`global: {scrape_interval: %s, evaluation_interval: %s}
rule_files: [rules/seckill.rules.yml]
alerting:
  alertmanagers: [{static_configs: [{targets: ["%s"]}]}]
scrape_configs:
  - job_name: seckill-api
    static_configs: [{targets: ["%s"]}]
  - job_name: haproxy
    static_configs: [{targets: ["%s"]}]
`, scrapeInterval, scrapeInterval, d.am.Addr, strings.Join(targets, `", "`), d.lb.Stats),
	})
	q := &querier{t: t, base: d.prom.URL}
	q.awaitScraped(len(d.apis) + 1)
	// The rules only now: before its first scrapes, Prometheus sees no replica at all.
	if err := os.WriteFile(filepath.Join(d.prom.Dir, "rules/seckill.rules.yml"), []byte(scaledRules(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := d.prom.Reload(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "Prometheus loads the rules", func() bool { return q.ruleGroups() == 4 })
	log("Prometheus scrapes every %s with the rules' durations divided by %d; Alertmanager posts to the webhook", scrapeInterval, timeScale)
	return d
}

// createProduct puts a product of strategy with stock on sale through the load balancer.
func (d *deployment) createProduct(t *testing.T, name, strategy string, stock int) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := d.admin.CreateProduct(ctx, api.NewProduct{Name: name, Stock: &stock, Strategy: strategy})
	if err != nil || p.ID == 0 {
		t.Fatalf("create product %s = %+v, %v", name, p, err)
	}
	return p.ID
}
