package main

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/loadgen/fakeapi"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestEtcdTargetsRefused (and -zookeeper-targets alike): -etcd-targets must name APIs whose /readyz lists the "etcd" check,
// -targets beside them APIs whose does not, and -strategies must include dlock. Each mistake
// is a bad command line (exit 2) that names the target, found before any product is made.
func TestEtcdTargetsRefused(t *testing.T) {
	t.Parallel()
	redisFake, redisAPI := fakeapi.New(t)
	redisFake2, redisAPI2 := fakeapi.New(t)
	etcdFake, etcdAPI := fakeapi.NewEtcd(t)
	_, etcdAPI2 := fakeapi.NewEtcd(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an API with its locks in Redis as an etcd target", []string{"-targets=" + redisAPI, "-etcd-targets=" + redisAPI2},
			"-etcd-targets: " + redisAPI2 + ` takes its locks in Redis: its /readyz lists no "etcd" check`},
		{"an API with its locks in etcd as a Redis target", []string{"-targets=" + etcdAPI2, "-etcd-targets=" + etcdAPI},
			"-targets: " + etcdAPI2 + ` takes its locks in etcd: its /readyz lists an "etcd" check`},
		{"no dlock to run on both", []string{"-targets=" + redisAPI, "-etcd-targets=" + etcdAPI, "-strategies=naive,redis"},
			"-etcd-targets: runs the dlock strategy on etcd beside dlock on -targets: add dlock to -strategies"},
		{"one API in both lists", []string{"-targets=" + redisAPI + "," + etcdAPI, "-etcd-targets=" + etcdAPI + "/"},
			"-etcd-targets: " + etcdAPI + " is also in -targets"},
		{"not a URL", []string{"-targets=" + redisAPI, "-etcd-targets=127.0.0.1:2379"},
			`-etcd-targets: "127.0.0.1:2379" is not an http(s) base URL`},
		{"an API with its locks in Redis as a ZooKeeper target", []string{"-targets=" + redisAPI, "-zookeeper-targets=" + redisAPI2},
			"-zookeeper-targets: " + redisAPI2 + ` takes its locks in Redis: its /readyz lists no "zookeeper" check; ` +
				"-zookeeper-targets are APIs started with LOCK_BACKEND=zookeeper and ZOOKEEPER_SERVERS"},
		{"an API with its locks in etcd as a ZooKeeper target", []string{"-targets=" + redisAPI, "-zookeeper-targets=" + etcdAPI},
			"-zookeeper-targets: " + etcdAPI + ` takes its locks in etcd: its /readyz lists the "etcd" check, not "zookeeper"`},
		{"one API in the etcd and ZooKeeper lists", []string{"-targets=" + redisAPI, "-etcd-targets=" + etcdAPI, "-zookeeper-targets=" + etcdAPI},
			"-zookeeper-targets: " + etcdAPI + " is also in -etcd-targets"},
		{"no dlock to run on ZooKeeper", []string{"-targets=" + redisAPI, "-zookeeper-targets=" + redisAPI2, "-strategies=naive"},
			"-zookeeper-targets: runs the dlock strategy on zookeeper beside dlock on -targets: add dlock to -strategies"},
	}
	for _, tt := range tests {
		args := append([]string{"compare", "-strategies=dlock", "-stock=5", "-requests=50", "-workers=2", "-baseline=false",
			"-expect-naive-oversell=false", "-wait=5s"}, tt.args...)
		out, errOut, err := runFake(t, redisAPI, args...)
		if exitCode(err) != exitUsage || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: exit %d, error %v; want exit %d and %q\nstdout:\n%s\nstderr:\n%s",
				tt.name, exitCode(err), err, exitUsage, tt.want, out, errOut)
		}
	}
	for _, f := range []*fakeapi.API{redisFake, redisFake2, etcdFake} {
		if n := len(f.Products()); n != 0 {
			t.Errorf("%d products were made before the command line was refused", n)
		}
	}
}

// TestCompareBothBackends: with -etcd-targets, each round sells dlock on the targets, then on
// the etcd targets, judged alike; the text, the JSON and the plot show both and etcd's figures
// over Redis's.
func TestCompareBothBackends(t *testing.T) {
	t.Parallel()
	redisFake, redisAPI := fakeapi.New(t)
	etcdFake, etcdAPI := fakeapi.NewEtcd(t)
	dir := t.TempDir()
	jsonPath, plotPath := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.html")
	out, errOut, err := runFake(t, redisAPI, "compare", "-targets="+redisAPI, "-etcd-targets="+etcdAPI,
		"-strategies=dlock,naive", "-stock=10", "-requests=200", "-workers=4", "-after-soldout=300ms", "-repeat-share=0",
		"-baseline=false", "-runs=2", "-json="+jsonPath, "-plot="+plotPath)
	if err != nil {
		t.Fatalf("compare: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	for _, want := range []string{"dlock (redis)", "dlock (etcd)", "and 1 with locks in etcd",
		"lock backends, the same scenario back to back in each round: dlock on etcd / on Redis, each round's ratio, median of 2: orders/s ",
		"PASS: no safe strategy oversold"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	rep := readReport(t, jsonPath)
	var names []string
	for _, row := range rep.Summary {
		names = append(names, row.Name+"/"+row.Backend)
	}
	if got, want := strings.Join(names, " "), "dlock (redis)/redis dlock (etcd)/etcd naive/"; got != want {
		t.Errorf("summary rows %q, want %q", got, want)
	}
	if e := rep.Summary[1]; e.VsRedis == nil || e.VsRedis.OrdersPerSec <= 0 || e.VsRedis.P99 <= 0 || e.Bought != 10 || !e.OK {
		t.Errorf("dlock (etcd) row: %+v, vs Redis %+v", e, e.VsRedis)
	}
	if rep.Summary[0].VsRedis != nil || strings.Join(rep.Scenario.EtcdTargets, ",") != etcdAPI {
		t.Errorf("dlock (redis) row has a ratio (%+v), or the scenario's etcd targets are %v", rep.Summary[0].VsRedis, rep.Scenario.EtcdTargets)
	}
	// Two rounds: each API sold its own products, dlock only on the etcd one.
	for _, c := range []struct {
		f    *fakeapi.API
		want map[string]int
	}{{redisFake, map[string]int{"dlock": 2, "naive": 2}}, {etcdFake, map[string]int{"dlock": 2}}} {
		got := map[string]int{}
		for _, p := range c.f.Products() {
			got[p.Strategy]++
		}
		if !maps.Equal(got, c.want) {
			t.Errorf("products by strategy %v, want %v", got, c.want)
		}
	}
	html, err := os.ReadFile(plotPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"dlock (etcd): bought", "dlock (redis): bought", "dlock on etcd / on Redis, each round&#39;s ratio"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("plot lacks %q", want)
		}
	}
}

// TestCompareBothBackendsAgainstAPIs: two real API processes with their locks in Redis, two
// with LOCK_BACKEND=etcd (the etcd at ETCD_ENDPOINTS) and two with LOCK_BACKEND=zookeeper (a
// one-member ensemble of the test's own), on one schema and key prefix; compare
// -etcd-targets -zookeeper-targets sells a dlock product on each set, and all pass the audits.
func TestCompareBothBackendsAgainstAPIs(t *testing.T) {
	endpoints := testenv.EtcdEndpoints(t) // skips without etcd
	dsn, redisAddr, prefix := testenv.APIBackend(t)
	zk := servers.StartZooKeeper(t, 1) // skips without java and the zookeeper jars
	t.Parallel()
	const token = "ci-loadtest-admin-token"
	env := map[string]string{
		"DATABASE_URL": dsn, "REDIS_ADDR": redisAddr, "REDIS_KEY_PREFIX": prefix,
		"ADMIN_TOKEN": token, "LOG_LEVEL": "warn", "DB_MAX_CONNS": "10", "SHUTDOWN_TIMEOUT": "15s",
	}
	etcdEnv, zkEnv := maps.Clone(env), maps.Clone(env)
	etcdEnv["LOCK_BACKEND"], etcdEnv["ETCD_ENDPOINTS"] = "etcd", strings.Join(endpoints, ",")
	zkEnv["LOCK_BACKEND"], zkEnv["ZOOKEEPER_SERVERS"] = "zookeeper", strings.Join(servers.ZooKeeperServers(zk), ",")
	bases := func(env map[string]string) string {
		var out []string
		for _, a := range servers.StartAPIs(t, 2, env) {
			out = append(out, a.Base)
		}
		return strings.Join(out, ",")
	}
	targets, etcdTargets, zkTargets := bases(env), bases(etcdEnv), bases(zkEnv)
	rep := compareOn(t, token, strings.Split(targets, ","), dsn, "-strategies", "dlock",
		"-etcd-targets", etcdTargets, "-zookeeper-targets", zkTargets,
		"-baseline=false", "-expect-naive-oversell=false", "-redis-addr", redisAddr, "-redis-prefix", prefix)
	backends := []string{loadgen.BackendRedis, loadgen.BackendEtcd, loadgen.BackendZooKeeper}
	if len(rep.Rounds) != 1 || len(rep.Rounds[0]) != len(backends) {
		t.Fatalf("rounds %v, want one of three runs", rep.Rounds)
	}
	for i, want := range backends {
		r := rep.Rounds[0][i]
		if r.Backend != want || r.Strategy != "dlock" || !r.Verdict.OK || r.Audit == nil || r.Audit.Direct == nil {
			t.Errorf("run %d: %s on %q: %s %v, want dlock on %s, passed and audited", i, r.Name, r.Backend, r.Verdict.Label, r.Verdict.Problems, want)
			continue
		}
		if s := r.Audit.Direct; s.Orders != 20 || s.Oversold != 0 || s.DuplicateUsers != 0 || !s.Consistent {
			t.Errorf("%s: direct audit %+v, want 20 orders, consistent", r.Name, *s)
		}
	}
	for _, e := range rep.Summary[1:] {
		if e.VsRedis == nil || e.VsRedis.OrdersPerSec <= 0 {
			t.Errorf("%s: no ratio to Redis: %+v", e.Name, e)
		}
	}
	if got := strings.Join(rep.Scenario.ZooKeeperTargets, ","); got != zkTargets {
		t.Errorf("scenario's ZooKeeper targets %q, want %q", got, zkTargets)
	}
}
