package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/ceiling"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// BenchmarkSoldOutHTTP: a purchase of a sold-out product through the whole gin handler
// (in memory, no sockets): the path most of a flash-sale crowd takes. It touches neither
// PostgreSQL nor Redis.
//
// /buyers=N: the product sold N units first, so that the fast path tells each new buyer
// from the N who hold an order (a retry of theirs is answered already_purchased).
func BenchmarkSoldOutHTTP(b *testing.B) {
	for _, buyers := range []int{0, 10_000} {
		b.Run(fmt.Sprintf("buyers=%d", buyers), func(b *testing.B) {
			s := newStack(b, order.Config{})
			benchSoldOut(b, s.App.Handler, soldOutPathAfter(b, s, buyers))
		})
	}
}

// BenchmarkBareGin is the baseline for BenchmarkSoldOutHTTP: the sold-out ceiling
// (internal/ceiling), a gin engine whose only handler decodes the same body and answers the
// same problem, api.SoldOut, with no service behind it.
func BenchmarkBareGin(b *testing.B) {
	benchSoldOut(b, ceiling.Handler(), "/api/v1/products/1/purchase")
}

// soldOutPath creates a product without stock on s, buys it once (which marks it sold out)
// and returns its purchase path.
func soldOutPath(b *testing.B, s *stack) string { return soldOutPathAfter(b, s, 0) }

// soldOutPathAfter is soldOutPath for a product that sold n units first, to users from 2^40 up
// (written straight to PostgreSQL: the benchmark's buyers count up from 1).
func soldOutPathAfter(b *testing.B, s *stack, n int) string {
	b.Helper()
	p := s.createProduct(b, n, "dlock", 0)
	if n > 0 {
		err := s.DB.Exec(`WITH ins AS (INSERT INTO orders (product_id, user_id)
			SELECT ?, (1::bigint << 40) + u FROM generate_series(1, ?) AS u RETURNING 1)
			UPDATE products SET stock = stock - (SELECT count(*) FROM ins) WHERE id = ?`, p.ID, n, p.ID).Error
		if err != nil {
			b.Fatal(err)
		}
	}
	if status, code, _ := s.purchase(p.ID, 1); code != api.CodeSoldOut {
		b.Fatalf("first purchase = %d %s", status, code)
	}
	return fmt.Sprintf("/api/v1/products/%d/purchase", p.ID)
}

// benchSoldOut is the loop of the sold-out benchmarks: purchases by distinct users, POSTed to
// path through h in memory from parallel goroutines, each of which must be answered 409.
func benchSoldOut(b *testing.B, h http.Handler, path string) {
	b.Helper()
	var user atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := fmt.Sprintf(`{"user_id":%d}`, user.Add(1))
			req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != http.StatusConflict {
				b.Fatalf("status %d", w.Code)
			}
		}
	})
}

// BenchmarkPurchaseHot: distinct buyers of one product whose stock never runs out, through
// the purchase service (no HTTP), per strategy: orders per second on one hot row.
func BenchmarkPurchaseHot(b *testing.B) {
	for _, strategy := range []inventory.Strategy{
		inventory.StrategyDlock, inventory.StrategyPessimistic, inventory.StrategyOptimistic, inventory.StrategyRedis,
	} {
		b.Run(string(strategy), func(b *testing.B) {
			s := newStack(b, order.Config{})
			p := s.createProduct(b, inventory.MaxStock, string(strategy), 0)
			var user atomic.Int64
			b.SetParallelism(8) // 8 buyers per core at once
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
