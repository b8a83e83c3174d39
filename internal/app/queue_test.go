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
)

// drainedAudit waits (10 s at most) until queue product id's stream is empty and returns the
// audit.
func drainedAudit(t *testing.T, s *stack, id int64) api.Audit {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := s.API.AwaitDrained(ctx, id, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestQueueUnderCrowd: the queue strategy over two API processes, many more buyers than
// stock. Every answer is 201, 202 or 409 sold_out; once the stream is drained, 201 or 202 ⇔ an
// order exists (the order lookup says so for every buyer), and the audit holds, Redis's side
// included.
func TestQueueUnderCrowd(t *testing.T) {
	t.Parallel()
	const stock, buyers = 50, 400
	first := newStack(t, order.Config{})
	second := newStackOn(t, first.DB, first.Redis, first.Prefix, order.Config{})
	p := first.createProduct(t, stock, "queue", 0)
	res := crowd(t, []*stack{first, second}, p.ID, buyers, func(i int) int64 { return int64(i + 1) })
	if other := buyers - res.get("201 ") - res.get("202 ") - res.get("409 "+api.CodeSoldOut); other != 0 {
		t.Errorf("%d answers were neither 201, 202 nor sold_out: %v", other, res.m)
	}
	a := drainedAudit(t, first, p.ID)
	if a.Orders != stock || !a.Consistent || a.Queue.Dead != 0 {
		t.Fatalf("audit %+v, queue %+v; want %d orders, consistent", a, a.Queue, stock)
	}
	if got := res.get("201 ") + res.get("202 "); got != stock {
		t.Errorf("201 + 202 = %d, want %d; answers %v", got, stock, res.m)
	}
	orders := 0
	for u := int64(1); u <= buyers; u++ {
		_, err := first.API.OrderOf(context.Background(), p.ID, u)
		var prob *api.Problem
		switch {
		case err == nil:
			orders++
		case errors.As(err, &prob) && prob.Code == api.CodeOrderNotFound:
		default:
			t.Fatalf("order lookup of user %d: %v", u, err)
		}
	}
	if orders != stock {
		t.Errorf("order lookups found %d orders, want %d", orders, stock)
	}
}

// TestQueueAccepted202: a queued purchase not written within QUEUE_WAIT answers 202 with the
// order lookup in Location; the lookup answers 404 order_not_found while it is queued and 200
// with the order once the consumer wrote it.
func TestQueueAccepted202(t *testing.T) {
	t.Parallel()
	s := newStack(t, order.Config{QueueWait: 50 * time.Millisecond})
	p := s.createProduct(t, 2, "queue", 700)
	ctx := context.Background()
	_, err := s.API.Purchase(ctx, p.ID, 7)
	var accepted *client.AcceptedError
	if !errors.As(err, &accepted) {
		t.Fatalf("purchase = %v, want 202", err)
	}
	want := fmt.Sprintf("/api/v1/products/%d/orders/7", p.ID)
	if accepted.Location != want || accepted.Order != want || accepted.Status != "accepted" ||
		accepted.ProductID != p.ID || accepted.UserID != 7 {
		t.Fatalf("202 = %+v, want Location and order %s", accepted, want)
	}
	status, code, _, _, err := s.do(http.MethodGet, accepted.Location, "", "")
	if err != nil || status != http.StatusNotFound || code != api.CodeOrderNotFound {
		t.Fatalf("lookup while queued = %d %s %v, want 404 order_not_found", status, code, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		status, _, _, _, err = s.do(http.MethodGet, accepted.Location, "", "")
		if err == nil && status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("lookup after 10s = %d %v, want 200", status, err)
		}
	}
	if a := drainedAudit(t, s, p.ID); a.Orders != 1 || !a.Consistent {
		t.Fatalf("audit %+v, queue %+v", a, a.Queue)
	}
}
