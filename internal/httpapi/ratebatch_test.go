package httpapi

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestLimiterSharesBudgetWithRedisRate: gcra.lua keeps a key as redis_rate does, so API
// processes of the version before it (redis_rate, one call per check) and of this one share
// each budget during a rolling upgrade: attempts spent by either count for both.
func TestLimiterSharesBudgetWithRedisRate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := testenv.Redis(t)
	l := NewLimiter(LimiterConfig{Redis: rdb, Prefix: prefix, Limits: RateLimits{User: Rate{5, time.Hour}}})
	old := redis_rate.NewLimiter(rdb)
	spendOld := func() bool {
		res, err := old.Allow(ctx, prefix+":rl:u:1:7", redis_rate.PerHour(5))
		if err != nil {
			t.Fatal(err)
		}
		return res.Allowed == 1
	}
	for i := range 3 {
		if !spendOld() {
			t.Fatalf("redis_rate refused attempt %d of 5", i+1)
		}
	}
	for i := 3; i < 5; i++ {
		if err := l.Allow(ctx, 1, 7, "192.0.2.1"); err != nil {
			t.Fatalf("attempt %d of 5 (after 3 through redis_rate): %v", i+1, err)
		}
	}
	err := l.Allow(ctx, 1, 7, "192.0.2.1")
	var limited rateLimited
	if !errors.As(err, &limited) || limited.wait < 11*time.Minute || limited.wait > 12*time.Minute {
		t.Fatalf("the sixth attempt: %v, want rate limited for about 12 minutes (an hour over 5)", err)
	}
	if spendOld() {
		t.Fatal("redis_rate allowed a seventh attempt the budget no longer has")
	}
}

// TestLimiterOnCluster: on a Redis Cluster, where the keys of a batch lie in different slots,
// each check of a batch goes to its own node, and budgets are still exact. Then one node loses
// its scripts: a batch whose keys lie on it and on others gets NOSCRIPT from that node only,
// and the checks the other nodes ran are not run (and spent) again.
func TestLimiterOnCluster(t *testing.T) {
	testenv.SkipShort(t, "a Redis Cluster of its own")
	t.Parallel()
	ctx := context.Background()
	addrs := servers.Addrs(servers.StartRedisCluster(t, 3))
	a := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	b := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { a.Close(); b.Close() })
	exactBudgets(t, "cluster", 0, a, b)

	batches := newCheckBatches(a, 0)
	var batch []*check
	for i := range 12 {
		batch = append(batch, &check{key: fmt.Sprintf("rate:cluster:rl:flush:%d", i), rate: Rate{2, time.Hour}})
	}
	node, err := a.MasterForKey(ctx, batch[0].key)
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := 0
	for _, c := range batch {
		if n, err := a.MasterForKey(ctx, c.key); err == nil && n.Options().Addr != node.Options().Addr {
			elsewhere++
		}
	}
	if elsewhere == 0 {
		t.Fatal("every key of the batch lies on one node: the test would not mix nodes")
	}
	if err := node.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for round, want := range []bool{true, true, false} { // a budget of two
		batches.run(ctx, batch)
		for _, c := range batch {
			if c.err != nil || c.ok != want {
				t.Fatalf("round %d, %s: allowed %v, err %v; want allowed %v (a check run twice spends twice)", round+1, c.key, c.ok, c.err, want)
			}
		}
	}
}

// TestLimiterLoadsItsScript: a Redis that lost its scripts (a restart, SCRIPT FLUSH) answers
// NOSCRIPT; the limiter loads gcra.lua again and answers, without failing open.
func TestLimiterLoadsItsScript(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	red := servers.StartRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: red.Addr})
	t.Cleanup(func() { rdb.Close() })
	obs := &countingObserver{}
	l := NewLimiter(LimiterConfig{Redis: rdb, Prefix: "p", Limits: RateLimits{User: Rate{1, time.Hour}}, Observer: obs})
	if err := l.Allow(ctx, 1, 1, "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := l.Allow(ctx, 1, 1, "192.0.2.1"); !errors.Is(err, errRateLimited) {
		t.Fatalf("the second attempt after SCRIPT FLUSH: %v, want rate limited", err)
	}
	if err := l.Allow(ctx, 1, 2, "192.0.2.1"); err != nil {
		t.Fatalf("another user: %v", err)
	}
	if n := obs.unavailable.Load(); n != 0 {
		t.Errorf("%d checks failed open, want none", n)
	}
	if n, _ := rdb.Exists(ctx, "rate:p:rl:u:1:1").Result(); n != 1 {
		t.Errorf("the limiter's key rate:p:rl:u:1:1 is missing")
	}
}

// TestLimiterInterval: under load the limiter's calls start at least Interval apart and the
// checks that arrive meanwhile share them: eight goroutines checking without pause for 300 ms
// make at most one call per Interval of the time they took (and one more: the first, lone
// check does not make the next wait), and every check is answered. Checks that come one at a
// time do not wait: ten in a row with an Interval of an hour take seconds at most.
func TestLimiterInterval(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb, prefix := testenv.Redis(t)
	if err := gcraScript.Load(ctx, rdb).Err(); err != nil { // no NOSCRIPT retry to count
		t.Fatal(err)
	}
	own := redis.NewClient(&redis.Options{Addr: rdb.Options().Addr})
	t.Cleanup(func() { own.Close() })
	calls := &pipelineCounter{}
	own.AddHook(calls)
	const interval = 50 * time.Millisecond
	l := NewLimiter(LimiterConfig{Redis: own, Prefix: prefix, Limits: RateLimits{User: Rate{1_000_000, time.Hour}}, Interval: interval})
	var checks atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for g := range 8 {
		wg.Go(func() {
			for time.Since(start) < 300*time.Millisecond {
				if err := l.Allow(ctx, 1, int64(g+1), "192.0.2.1"); err != nil {
					t.Errorf("user %d: %v, want allowed", g+1, err)
					return
				}
				checks.Add(1)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	n := calls.n.Load()
	if most := int64(elapsed/interval) + 2; n > most || n < 1 {
		t.Fatalf("%d checks in %s made %d calls to Redis, want 1 to %d (one per %s at most)", checks.Load(), elapsed, n, most, interval)
	}
	t.Logf("%d checks in %s: %d calls", checks.Load(), elapsed.Round(time.Millisecond), n)

	alone := NewLimiter(LimiterConfig{Redis: own, Prefix: prefix, Limits: RateLimits{User: Rate{1_000_000, time.Hour}}, Interval: time.Hour})
	start = time.Now()
	for i := range 10 {
		if err := alone.Allow(ctx, 2, 1, "192.0.2.1"); err != nil {
			t.Fatalf("check %d: %v, want allowed", i+1, err)
		}
	}
	if took := time.Since(start); took > time.Minute {
		t.Fatalf("10 checks one at a time took %s: they waited for the interval", took)
	}
}

// pipelineCounter is a go-redis hook that counts the pipelines of gcra.lua calls: the
// limiter's calls (not the connection's set-up, also a pipeline).
type pipelineCounter struct{ n atomic.Int64 }

func (*pipelineCounter) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (*pipelineCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (c *pipelineCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "evalsha" {
			c.n.Add(1)
		}
		return next(ctx, cmds)
	}
}
