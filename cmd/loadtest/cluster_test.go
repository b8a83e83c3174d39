package main

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// The tests of this file run the service on the multi-node Redis topologies of
// docs/deployment.md (what `make cluster-up` starts), with servers of their own on free
// ports, started by internal/testenv/servers and stopped at cleanup: three API processes, a
// short compare, audits.

const topologyToken = "topology-admin-token"

// TestTopologyRedisCluster: every strategy on a three-master Redis Cluster (locks, the redis
// strategy's gate, the sold-out channel and the rate limits all in the cluster).
func TestTopologyRedisCluster(t *testing.T) {
	skipTopology(t)
	t.Parallel()
	dsn := testenv.Schema(t)
	clusterAddrs := strings.Join(servers.Addrs(servers.StartRedisCluster(t, 3)), ",")
	prefix := testenv.Name("t")
	targets := startAPIs(t, dsn, map[string]string{"REDIS_CLUSTER_ADDRS": clusterAddrs, "REDIS_KEY_PREFIX": prefix})
	// Both audits read the cluster: the API's, and the harness's own (-redis-addr, a list).
	rep := compareOn(t, topologyToken, targets, dsn, "-baseline=false",
		"-redis-addr", clusterAddrs, "-redis-prefix", prefix)
	checkRounds(t, rep, loadgen.Strategies)
	for _, r := range rep.Rounds[0] {
		if r.Strategy == "redis" && (r.Audit == nil || r.Audit.Direct == nil || r.Audit.Direct.Gate == nil) {
			t.Errorf("redis: no direct audit of the gate in the cluster: %+v", r.Audit)
		}
	}
}

// TestTopologyRedlockOneNodeDown: the dlock strategy with its locks on three independent
// Redis servers (Redlock), one of them stopped before the sale.
func TestTopologyRedlockOneNodeDown(t *testing.T) {
	skipTopology(t)
	t.Parallel()
	dsn := testenv.Schema(t)
	nodes := startRedlock(t)
	_, prefix := testenv.Redis(t) // the gate and the sold-out channel stay on REDIS_ADDR
	targets := startAPIs(t, dsn, map[string]string{"REDLOCK_ADDRS": strings.Join(servers.Addrs(nodes), ","),
		"REDIS_ADDR": testenv.RedisAddr(t), "REDIS_KEY_PREFIX": prefix})
	nodes[0].Stop()
	rep := compareOn(t, topologyToken, targets, dsn, "-baseline=false", "-strategies", "dlock", "-redis-addr", testenv.RedisAddr(t), "-redis-prefix", prefix)
	checkRounds(t, rep, []string{"dlock"})
}

// TestTopologyRedlockTwoNodesDown: with two of three Redlock servers stopped, every purchase
// answers 503 (busy or unavailable), nothing is sold and nothing breaks; once they are back,
// the sale finishes without an oversell.
func TestTopologyRedlockTwoNodesDown(t *testing.T) {
	skipTopology(t)
	t.Parallel()
	dsn := testenv.Schema(t)
	nodes := startRedlock(t)
	_, prefix := testenv.Redis(t)
	targets := startAPIs(t, dsn, map[string]string{"REDLOCK_ADDRS": strings.Join(servers.Addrs(nodes), ","),
		"REDIS_ADDR": testenv.RedisAddr(t), "REDIS_KEY_PREFIX": prefix})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := client.New(targets[0], &client.Options{AdminToken: topologyToken})
	if err := loadgen.WaitReady(ctx, loadgen.Deployment{}, targets, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	p, err := c.CreateProduct(ctx, api.NewProduct{Name: "redlock-drill", Stock: new(10), Strategy: "dlock"})
	if err != nil {
		t.Fatal(err)
	}

	nodes[0].Stop()
	nodes[1].Stop()
	answers := buyAll(ctx, targets, p.ID, 1, 30, 0)
	t.Logf("two of three Redlock nodes down: %v", answers)
	for k, n := range answers {
		if k != "503 "+api.CodeBusy && k != "503 "+api.CodeUnavailable {
			t.Errorf("%d answers %q with two of three Redlock nodes down, want only 503 busy or unavailable", n, k)
		}
	}
	if a := auditOf(ctx, t, c, p.ID); a.Orders != 0 || !a.Consistent {
		t.Fatalf("audit after the failed sale: %+v", a)
	}

	nodes[0].Start()
	nodes[1].Start()
	answers = buyAll(ctx, targets, p.ID, 101, 40, 20)
	t.Logf("nodes back: %v", answers)
	if answers["201 "] != 10 || answers["409 "+api.CodeSoldOut] != 30 {
		t.Errorf("answers after the nodes came back = %v, want 10 bought and 30 sold out", answers)
	}
	if a := auditOf(ctx, t, c, p.ID); a.Orders != 10 || a.Oversold != 0 || !a.Consistent {
		t.Fatalf("audit after the sale: %+v", a)
	}
}

// skipTopology skips with -short and without redis-server.
func skipTopology(t *testing.T) {
	t.Helper()
	testenv.SkipShort(t, "Redis servers and three API processes")
	testenv.DatabaseURL(t)
	testenv.RedisAddr(t)
	servers.RedisBin(t)
}

// startRedlock starts three independent Redis servers of the test's own for Redlock.
func startRedlock(t *testing.T) []*servers.Redis {
	t.Helper()
	return []*servers.Redis{servers.StartRedis(t), servers.StartRedis(t), servers.StartRedis(t)}
}

// startAPIs starts three API processes on the schema dsn with the Redis settings in redis,
// waits until they are ready, and returns their base URLs.
func startAPIs(t *testing.T, dsn string, redis map[string]string) []string {
	t.Helper()
	env := map[string]string{"DATABASE_URL": dsn, "ADMIN_TOKEN": topologyToken, "LOG_LEVEL": "warn",
		"DB_MAX_CONNS": "5", "SHUTDOWN_TIMEOUT": "15s", "RATE_LIMIT_USER": "off"}
	maps.Copy(env, redis)
	var targets []string
	for _, api := range servers.StartAPIs(t, 3, env) {
		targets = append(targets, api.Base)
	}
	return targets
}

// gate that disagrees with PostgreSQL, and on a strategy in want that did not run.
func checkRounds(t *testing.T, rep loadgen.Report, want []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range rep.Rounds[0] {
		seen[r.Strategy] = true
		if r.Audit == nil || r.Audit.Direct == nil {
			t.Errorf("%s: no direct audit", r.Name)
			continue
		}
		if s := r.Audit.Direct; loadgen.IsSafe(r.Strategy) && (s.Oversold != 0 || s.DuplicateUsers != 0 || !s.Consistent) {
			t.Errorf("%s: direct audit %+v", r.Name, *s)
		}
		if r.Strategy == "redis" && (r.Audit.API == nil || r.Audit.API.Redis == nil || !r.Audit.API.Redis.Agrees) {
			t.Errorf("redis: the API's audit says the gate and PostgreSQL disagree: %+v", r.Audit.API)
		}
	}
	for _, s := range want {
		if !seen[s] {
			t.Errorf("no %q run in the report", s)
		}
	}
}

// buyAll sends purchases for users first..first+n-1 of product id at once, spread over
// targets, retrying each 503 up to retries times, and counts the final answers by
// "status code".
func buyAll(ctx context.Context, targets []string, id, first int64, n, retries int) map[string]int {
	var mu sync.Mutex
	answers := map[string]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			c := client.New(targets[i%len(targets)], nil)
			var key string
			for try := 0; try <= retries; try++ {
				_, err := c.Purchase(ctx, id, first+int64(i))
				key = answerKey(err)
				if !strings.HasPrefix(key, "503") {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			mu.Lock()
			defer mu.Unlock()
			answers[key]++
		})
	}
	wg.Wait()
	return answers
}

// answerKey names the answer of a purchase: "201 ", or the problem's status and code.
func answerKey(err error) string {
	var p *api.Problem
	switch {
	case err == nil:
		return "201 "
	case errors.As(err, &p):
		return strconv.Itoa(p.Status) + " " + p.Code
	}
	return "error " + err.Error()
}

func auditOf(ctx context.Context, t *testing.T, c *client.Client, id int64) api.Audit {
	t.Helper()
	a, err := c.Audit(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
