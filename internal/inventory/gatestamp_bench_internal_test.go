package inventory

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// BenchmarkGateSoldOut measures the gate's sold-out answer, the answer a crowd gets once a
// product has no unit left and no process holds its sold-out mark: the admission script of the
// redis strategy (admit) and of the queue strategy (enqueue) run for new buyers, 16 at a time,
// on a stamped gate with no unit, on a redis-server of its own. Each runs as it was before
// the stamp check (testdata/*_unstamped.lua) and as it is, the four in turn, six rounds (-count
// would repeat each before the next), so before and after alternate in one run. ns/op is wall
// time per answer (1e9/ns answers a second), redis-us/op the time Redis spent in the script
// per answer (INFO commandstats).
func BenchmarkGateSoldOut(b *testing.B) {
	srv := servers.StartRedis(b)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 16})
	defer rdb.Close()
	keys := Keys{Prefix: "bench"}
	g := NewGate(rdb, keys)
	ctx := context.Background()
	if _, err := g.StartSeeding(1).Publish(ctx, SeedInit, 0); err != nil {
		b.Fatal(err)
	}
	unstamped := func(name string) *redis.Script {
		src, err := os.ReadFile("testdata/" + name + "_unstamped.lua")
		if err != nil {
			b.Fatal(err)
		}
		return redis.NewScript(string(src))
	}
	gate := g.gateKeys(1)
	queue := []string{keys.GateStock(1), keys.GateBuyers(1), keys.QueueStream(1)}
	var user atomic.Int64
	admit := func() []any { return []any{user.Add(1) + 100, "t", 60000} }
	enqueue := func() []any { return []any{user.Add(1) + 100} }
	cases := []struct {
		name   string
		script *redis.Script
		keys   []string
		args   func() []any
	}{
		{"admit/before", unstamped("admit"), gate, admit},
		{"admit/after", admitScript, append(gate, keys.GateStamp(1)), admit},
		{"enqueue/before", unstamped("enqueue"), queue, enqueue},
		{"enqueue/after", enqueueScript, append(queue, keys.GateStamp(1)), enqueue},
	}
	for round := range 6 {
		for _, c := range cases {
			b.Run(c.name+"/round"+strconv.Itoa(round+1), func(b *testing.B) {
				if err := c.script.Load(ctx, rdb).Err(); err != nil {
					b.Fatal(err)
				}
				from := evalshaUsec(b, rdb)
				b.SetParallelism(8) // 16 buyers on 2 cores
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if res, err := c.script.Run(ctx, rdb, c.keys, c.args()...).Int(); err != nil || res != 0 {
							b.Errorf("sold-out answer = %d, %v; want 0", res, err)
							return
						}
					}
				})
				b.ReportMetric((evalshaUsec(b, rdb)-from)/float64(b.N), "redis-us/op")
			})
		}
	}
}

// evalshaUsec is the microseconds Redis has spent in EVALSHA since it started (INFO
// commandstats): the scripts' time, the commands they call included.
func evalshaUsec(b *testing.B, rdb *redis.Client) float64 {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.Lines(info) {
		stats, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_evalsha:")
		if !ok {
			continue
		}
		for field := range strings.SplitSeq(stats, ",") {
			if v, ok := strings.CutPrefix(field, "usec="); ok {
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					b.Fatalf("INFO commandstats: %q: %v", line, err)
				}
				return n
			}
		}
	}
	return 0
}
