package app_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/labapi"
	"github.com/seckill/seckill/internal/testenv"
)

// BenchmarkPurchaseHotLockHistory is BenchmarkPurchaseHot's dlock case with the lock history
// off and on (LOCK_HISTORY: every grant, write and release appended to a file): what
// recording costs the hot product's buyers.
func BenchmarkPurchaseHotLockHistory(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "on"}[on]
		b.Run(name, func(b *testing.B) {
			cfg := app.Config{DB: testenv.Postgres(b), AdminToken: adminToken}
			cfg.Redis, cfg.RedisPrefix = testenv.Redis(b)
			if on {
				f, err := history.CreateLockFile(filepath.Join(b.TempDir(), "locks.jsonl"), "bench")
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { f.Close() })
				cfg.Plug = labapi.Plug(labapi.Options{LockHistory: f})
			}
			s := serve(b, cfg)
			p := s.createProduct(b, inventory.MaxStock, string(inventory.StrategyDlock), 0)
			var user atomic.Int64
			b.SetParallelism(8)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := s.App.Orders.Purchase(context.Background(), p.ID, user.Add(1)); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "orders/s")
		})
	}
}
