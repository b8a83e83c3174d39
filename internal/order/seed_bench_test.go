package order_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// BenchmarkSeedGate seeds the Redis gate of a product that has n orders, the way a buyer does
// after Redis lost its data, on a redis-server of its own so that its slow log is the
// seeding's alone. It reports the longest single Redis command (slowest-cmd-us) and the
// largest heap of this process during a seeding (peak-heap-MiB): the seeding goes in chunks
// so that neither grows with n.
//
//	go test -run '^$' -bench SeedGate -benchtime 3x ./internal/order/
func BenchmarkSeedGate(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("orders=%d", n), func(b *testing.B) {
			red := servers.StartRedis(b, "--slowlog-log-slower-than", "0", "--slowlog-max-len", "100000")
			rdb := red.Client()
			gdb := testenv.Postgres(b)
			a := app.New(app.Config{Plug: teaching, DB: gdb, Redis: rdb, RedisPrefix: "bench"})
			b.Cleanup(func() { a.Close() })
			ctx := context.Background()
			p, err := inventory.NewStore(gdb).Create(ctx, inventory.NewProduct{Name: "p", Stock: n + 1_000_000, Strategy: inventory.StrategyRedis})
			if err != nil {
				b.Fatal(err)
			}
			writeOrders(b, gdb, p.ID, 1, int64(n))
			var (
				slowest time.Duration
				peak    uint64
			)
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				rdb.FlushAll(ctx)
				rdb.SlowLogReset(ctx)
				runtime.GC()
				stop := sampleHeap(&peak)
				b.StartTimer()
				if _, err := a.Orders.Purchase(ctx, p.ID, int64(n+1+i)); err != nil { // seeds, then buys
					b.Fatal(err)
				}
				b.StopTimer()
				stop()
				entries, err := rdb.SlowLogGet(ctx, -1).Result()
				if err != nil {
					b.Fatal(err)
				}
				for _, e := range entries {
					slowest = max(slowest, e.Duration)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(slowest.Microseconds()), "slowest-cmd-us")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
			if st, _ := a.Gate.State(ctx, p.ID); st.Buyers != int64(n+b.N) {
				b.Fatalf("gate buyers = %d, want %d", st.Buyers, n+b.N)
			}
		})
	}
}

// sampleHeap records the largest HeapInuse into peak every millisecond until stop is called.
func sampleHeap(peak *uint64) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			*peak = max(*peak, m.HeapInuse)
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return func() { close(done); <-finished }
}
