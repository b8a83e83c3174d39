package httpapi

import (
	"context"
	"errors"
	"fmt"
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
	exactBudgets(t, "cluster", a, b)

	batches := newCheckBatches(a)
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
