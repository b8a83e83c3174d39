package app_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// retryAnswer is what a retried purchase of user was told: the problem's code and the order it
// named.
func retryAnswer(t *testing.T, s *stack, id, user int64) (string, int64) {
	t.Helper()
	_, err := s.API.Purchase(context.Background(), id, user)
	var p *api.Problem
	if !errors.As(err, &p) {
		t.Fatalf("retry of user %d: %v, want a 409", user, err)
	}
	return p.Code, p.OrderID
}

// TestRetryAfterSellOutTellsTheTruth: a buyer who holds an order and retries once the product
// is sold out (its first answer lost: most often the one that took the last unit) is answered
// already_purchased with that order, and only a buyer without one is answered sold_out, for
// every strategy: on the process that marked the product sold out (the fast path), and on one
// that has not heard of the mark (its own Redis prefix: it finds the stock at zero itself).
func TestRetryAfterSellOutTellsTheTruth(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	rdb, prefix := testenv.Redis(t)
	cfg := order.Config{LockWait: 2 * time.Second}
	marked := newStackOn(t, gdb, rdb, prefix, cfg)
	_, otherPrefix := testenv.Redis(t)
	unmarked := newStackOn(t, gdb, rdb, otherPrefix, cfg)
	for _, strategy := range []string{"dlock", "dlock-fair", "naive", "pessimistic", "optimistic", "redis", "queue"} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			p := marked.createProduct(t, 1, strategy, 0)
			o := buyWritten(t, marked, p.ID, 1)
			if status, code, _ := marked.purchase(p.ID, 2); code != api.CodeSoldOut {
				t.Fatalf("purchase by a new buyer = %d %s, want 409 sold_out", status, code)
			}
			for _, s := range []*stack{marked, unmarked, marked} {
				if code, id := retryAnswer(t, s, p.ID, 1); code != api.CodeAlreadyPurchased || id != o.ID {
					t.Errorf("retry of the buyer through %s = %s order %d, want already_purchased order %d",
						name(s, marked), code, id, o.ID)
				}
				if code, _ := retryAnswer(t, s, p.ID, 3); code != api.CodeSoldOut {
					t.Errorf("new buyer through %s = %s, want sold_out", name(s, marked), code)
				}
			}
		})
	}
}

// buyWritten buys product id for user and returns the order once it is written (a queued
// purchase answered 202 is waited for).
func buyWritten(t *testing.T, s *stack, id, user int64) api.Order {
	t.Helper()
	o, err := s.API.Purchase(context.Background(), id, user)
	var accepted *client.AcceptedError
	if errors.As(err, &accepted) {
		testenv.Eventually(t, 10*time.Second, "the queued purchase written", func() bool {
			o, err = s.API.OrderOf(context.Background(), id, user)
			return err == nil
		})
	}
	if err != nil {
		t.Fatalf("purchase: %v", err)
	}
	return o
}

func name(s, marked *stack) string {
	if s == marked {
		return "the process that marked it sold out"
	}
	return "a process without the mark"
}

// TestRetryOfLostAnswer is the defect as a client met it: stock 1, think_ms 1500, the client
// gives up after 0.5 s and retries once the sale is over. Its purchase was committed all the
// same (a dlock batch's leader writes for every buyer that joined it), so the retry must be
// answered already_purchased with that order, not sold_out.
func TestRetryOfLostAnswer(t *testing.T) {
	t.Parallel()
	s := newStack(t, order.Config{LockWait: 2 * time.Second})
	p := s.createProduct(t, 1, "dlock", 1500)
	impatient := client.New(s.URL, &client.Options{HTTPClient: &http.Client{Timeout: 500 * time.Millisecond}})
	if _, err := impatient.Purchase(context.Background(), p.ID, 1); err == nil {
		t.Fatal("the purchase answered within 0.5 s despite think_ms 1500")
	}
	var o api.Order
	testenv.Eventually(t, 10*time.Second, "the abandoned purchase committed", func() bool {
		var err error
		o, err = s.API.OrderOf(context.Background(), p.ID, 1)
		return err == nil
	})
	if status, code, _ := s.purchase(p.ID, 2); code != api.CodeSoldOut {
		t.Fatalf("new buyer = %d %s, want 409 sold_out", status, code)
	}
	if code, id := retryAnswer(t, s, p.ID, 1); code != api.CodeAlreadyPurchased || id != o.ID {
		t.Errorf("retry = %s order %d, want already_purchased order %d", code, id, o.ID)
	}
}

// TestBundleRetryAfterSellOut: a bundle bought, its products then sold out (marked), and the
// same bundle retried: already_purchased naming the first product and its order, not
// sold_out; a new buyer's bundle is sold_out.
func TestBundleRetryAfterSellOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStack(t, order.Config{LockWait: 2 * time.Second})
	a, b := s.createProduct(t, 1, "dlock", 0), s.createProduct(t, 1, "dlock", 0)
	got, err := s.API.PurchaseBundle(ctx, 7, a.ID, b.ID)
	if err != nil {
		t.Fatalf("bundle: %v", err)
	}
	for _, tc := range []struct {
		user  int64
		code  string
		order int64
	}{{8, api.CodeSoldOut, 0}, {7, api.CodeAlreadyPurchased, got.Orders[0].ID}, {9, api.CodeSoldOut, 0}} {
		_, err := s.API.PurchaseBundle(ctx, tc.user, a.ID, b.ID)
		var p *api.Problem
		if !errors.As(err, &p) || p.Code != tc.code || p.OrderID != tc.order || p.ProductID != a.ID {
			t.Errorf("bundle of user %d = %v, want %s naming product %d%s", tc.user, err, tc.code, a.ID,
				map[bool]string{true: fmt.Sprintf(" and order %d", tc.order)}[tc.order != 0])
		}
	}
}
