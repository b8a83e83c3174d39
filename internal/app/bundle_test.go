package app_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/app"
	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// TestBundlePurchase: a bundle sells one unit of each product or nothing. Its answers name
// the product that decided them (sold_out, already_purchased, product_not_found), and bad
// bundles are 400.
func TestBundlePurchase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStack(t, order.Config{LockWait: 2 * time.Second})
	a, b, empty := s.createProduct(t, 5, "dlock", 0), s.createProduct(t, 5, "dlock", 0), s.createProduct(t, 0, "dlock", 0)
	got, err := s.API.PurchaseBundle(ctx, 7, b.ID, a.ID)
	if err != nil || len(got.Orders) != 2 || got.Orders[0].ProductID != b.ID || got.Orders[1].ProductID != a.ID {
		t.Fatalf("bundle = %+v, %v; want orders of %d and %d, in that order", got, err, b.ID, a.ID)
	}
	problem := func(err error) *api.Problem {
		var p *api.Problem
		if !errors.As(err, &p) {
			t.Fatalf("answer %v is not a problem", err)
		}
		return p
	}
	if _, err := s.API.PurchaseBundle(ctx, 8, a.ID, empty.ID); err == nil {
		t.Fatal("a bundle with a sold-out product was sold")
	} else if p := problem(err); p.Code != api.CodeSoldOut || p.ProductID != empty.ID {
		t.Errorf("bundle with a sold-out product: %+v, want sold_out naming %d", p, empty.ID)
	}
	if _, err := s.API.PurchaseBundle(ctx, 7, a.ID); err == nil {
		t.Fatal("a product was sold twice to one user")
	} else if p := problem(err); p.Code != api.CodeAlreadyPurchased || p.ProductID != a.ID || p.OrderID != got.Orders[1].ID {
		t.Errorf("bundle bought before: %+v, want already_purchased naming %d and order %d", p, a.ID, got.Orders[1].ID)
	}
	if _, err := s.API.PurchaseBundle(ctx, 9, a.ID, 1<<40); err == nil {
		t.Fatal("a bundle with an unknown product was sold")
	} else if p := problem(err); p.Code != api.CodeProductNotFound || p.ProductID != 1<<40 {
		t.Errorf("bundle with an unknown product: %+v", p)
	}
	checkAudit(t, s.audit(t, a.ID), 1) // user 8's attempt wrote nothing
	checkAudit(t, s.audit(t, b.ID), 1)
	naive, fair := s.createProduct(t, 5, "naive", 0), s.createProduct(t, 5, "dlock-fair", 0)
	for _, bad := range [][]int64{nil, {a.ID, a.ID}, {a.ID, naive.ID}, {a.ID, fair.ID}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {0}} {
		if _, err := s.API.PurchaseBundle(ctx, 10, bad...); err == nil || problem(err).Code != api.CodeInvalidRequest {
			t.Errorf("bundle %v = %v, want 400 invalid_request", bad, err)
		}
	}
}

// TestBundlesOverlapNoDeadlock: two crowds over two API processes buy overlapping bundles of
// three products, listed in opposite orders, while single buyers buy the same products. Every
// request is answered (no deadlock), and every product sells out exactly: orders == sold,
// nothing oversold, and each bundle buyer has all of its orders or none.
func TestBundlesOverlapNoDeadlock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The processes log their errors where a failure shows them: a 500 says why.
	var errLog testenv.Buffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the API processes' errors:\n%s", errLog.Tail(20))
		}
	})
	base := newStack(t, order.Config{}) // the database and Redis prefix of the test
	cfg := app.Config{DB: base.DB, Redis: base.Redis, RedisPrefix: base.Prefix, AdminToken: adminToken,
		Order:  order.Config{LockWait: 3 * time.Second},
		Logger: slog.New(slog.NewJSONHandler(&errLog, &slog.HandlerOptions{Level: slog.LevelError}))}
	first, second := serve(t, cfg), serve(t, cfg)
	stacks := []*stack{first, second}
	const stock = 40
	x, y, z := first.createProduct(t, stock, "dlock", 0), first.createProduct(t, stock, "dlock", 0), first.createProduct(t, stock, "dlock", 0)
	bundles := [][]int64{{x.ID, y.ID}, {y.ID, x.ID}, {z.ID, y.ID}, {x.ID, z.ID}}
	var (
		wg   sync.WaitGroup
		res  tally
		mu   sync.Mutex
		sold = map[int64][]int64{} // user -> the products of the bundle it bought
	)
	for i := range 120 {
		wg.Go(func() {
			user, set := int64(i+1), bundles[i%len(bundles)]
			_, err := stacks[i%2].API.PurchaseBundle(ctx, user, set...)
			status, code, terr := answerOf(err, 201)
			if terr != nil {
				t.Errorf("bundle: %v", terr)
				return
			}
			res.add(status, code)
			if status == 201 {
				mu.Lock()
				sold[user] = set
				mu.Unlock()
			}
		})
	}
	single := crowd(t, stacks, y.ID, 60, func(i int) int64 { return int64(1000 + i) })
	wg.Wait()
	if n := res.get("201 ") + res.get("409 "+api.CodeSoldOut) + res.get("503 "+api.CodeBusy); n != 120 {
		t.Errorf("bundle answers %v: some were neither bought, sold out nor busy", res.m)
	}
	for _, p := range []api.Product{x, y, z} {
		a := first.audit(t, p.ID)
		if a.Oversold != 0 || a.Orders != a.Sold || a.DuplicateUsers != 0 || !a.Consistent {
			t.Errorf("product %d: audit %+v", p.ID, a)
		}
	}
	for i := range 120 {
		user, set := int64(i+1), bundles[i%len(bundles)]
		_, bought := sold[user]
		for _, id := range set {
			_, err := first.API.OrderOf(ctx, id, user)
			if has := err == nil; has != bought {
				t.Errorf("user %d (bundle %v bought: %v) has an order of %d: %v (%v)", user, set, bought, id, has, err)
			}
		}
	}
	t.Logf("bundles %v; single buyers of product %d %v", res.m, y.ID, single.m)
}

// TestBundleFencesByKey: each product of a bundle is written under its own lock's fence, also
// when the lock keys sort otherwise than the product ids ("{p:10}" before "{p:2}"): after the
// bundle, every product's fence in PostgreSQL is the last fence minted for its own key.
func TestBundleFencesByKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStack(t, order.Config{LockWait: 2 * time.Second})
	keys := inventory.Keys{Prefix: s.Prefix}
	var low, high int64 // low < high, but high's lock key sorts first
	for i := 0; i < 30 && high == 0; i++ {
		p := s.createProduct(t, 5, "dlock", 0)
		for id := int64(1); id < p.ID && high == 0; id++ {
			if keys.Lock(p.ID) < keys.Lock(id) {
				low, high = id, p.ID
			}
		}
	}
	if high == 0 {
		t.Fatal("no two products whose lock keys sort otherwise than their ids (the schema's ids start at 1)")
	}
	if _, err := s.API.PurchaseBundle(ctx, 7, low, high); err != nil {
		t.Fatalf("bundle %d, %d: %v", low, high, err)
	}
	for _, id := range []int64{low, high} {
		var fence int64
		if err := s.DB.Raw(`SELECT fence FROM products WHERE id = ?`, id).Scan(&fence).Error; err != nil {
			t.Fatal(err)
		}
		minted, err := s.Redis.Get(ctx, dlock.FenceKey(keys.Lock(id))).Int64()
		if err != nil {
			t.Fatal(err)
		}
		if fence != minted {
			t.Errorf("product %d: fence %d in PostgreSQL, but its own lock minted %d", id, fence, minted)
		}
	}
}
