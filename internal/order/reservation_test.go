package order_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/labapi"
	"github.com/seckill/seckill/internal/order"
)

// reservable are the strategies whose products may have a payment window.
var reservable = []inventory.Strategy{inventory.StrategyDlock, inventory.StrategyPessimistic,
	inventory.StrategyOptimistic, inventory.StrategyRedis, inventory.StrategyQueue}

// noSweeper is a service configuration whose sweeper never runs by itself: the tests sweep.
var noSweeper = order.Config{SweepInterval: -1}

// windowProduct creates a product of strategy s with stock units and a payment window.
func (e *env) windowProduct(t *testing.T, stock int, s inventory.Strategy, window time.Duration) inventory.Product {
	t.Helper()
	p, err := e.store.Create(context.Background(), inventory.NewProduct{Name: "r", Stock: stock, Strategy: s,
		PayWithinMS: int(window.Milliseconds())})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// buy buys one unit of product id for user on s and returns the order, waiting for a queued
// purchase to be written.
func buy(t *testing.T, s *order.Service, id, user int64) order.Order {
	t.Helper()
	ctx := context.Background()
	o, err := s.Purchase(ctx, id, user)
	for deadline := time.Now().Add(10 * time.Second); errors.Is(err, order.ErrAccepted) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		o, err = s.OrderOf(ctx, id, user)
		if errors.Is(err, order.ErrOrderNotFound) {
			err = order.ErrAccepted
		}
	}
	if err != nil {
		t.Fatalf("user %d buys product %d: %v", user, id, err)
	}
	return o
}

// lapse moves order id's reservation an hour into the past, as if its pay_by had passed long
// ago (created_at moves with it, keeping the window).
func (e *env) lapse(t *testing.T, id int64) {
	t.Helper()
	mustExec(t, e.db, `UPDATE orders SET created_at = created_at - interval '1 hour', pay_by = pay_by - interval '1 hour'
		WHERE id = ?`, id)
}

// TestReservationLifecycle, for each reservable strategy: a reservation is pending, paid in
// time (idempotently), cancelled (idempotently, its unit back), expired by a late payment or
// the sweeper (its unit back once), and its buyer may buy again; PostgreSQL and Redis agree
// throughout.
func TestReservationLifecycle(t *testing.T) {
	t.Parallel()
	for _, s := range reservable {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, noSweeper)
			svc, ctx := e.app.Orders, context.Background()
			p := e.windowProduct(t, 3, s, time.Minute)

			o := buy(t, svc, p.ID, 1)
			if o.Status != order.StatusPending || o.PayBy == nil || !o.PayBy.After(o.CreatedAt) {
				t.Fatalf("new order = %+v, want pending with a pay_by after created_at", o)
			}
			paid, err := svc.Pay(ctx, p.ID, 1)
			if err != nil || paid.Status != order.StatusPaid || paid.PaidAt == nil || paid.ID != o.ID {
				t.Fatalf("pay = %+v, %v; want order %d paid", paid, err, o.ID)
			}
			if again, err := svc.Pay(ctx, p.ID, 1); err != nil || again.Status != order.StatusPaid || !again.PaidAt.Equal(*paid.PaidAt) {
				t.Fatalf("pay again = %+v, %v; want the same payment", again, err)
			}
			if _, err := svc.Cancel(ctx, p.ID, 1); !errors.Is(err, order.ErrOrderPaid) {
				t.Fatalf("cancel a paid order: %v, want ErrOrderPaid", err)
			}

			buy(t, svc, p.ID, 2)
			e.wantAudit(t, p.ID, 2, 1)
			c, err := svc.Cancel(ctx, p.ID, 2)
			if err != nil || c.Status != order.StatusCancelled || c.EndedAt == nil {
				t.Fatalf("cancel = %+v, %v; want cancelled", c, err)
			}
			if again, err := svc.Cancel(ctx, p.ID, 2); err != nil || again.ID != c.ID || again.Status != order.StatusCancelled {
				t.Fatalf("cancel again = %+v, %v; want the same cancelled order", again, err)
			}
			if _, err := svc.Pay(ctx, p.ID, 2); !errors.Is(err, order.ErrOrderCancelled) {
				t.Fatalf("pay a cancelled order: %v, want ErrOrderCancelled", err)
			}
			e.wantAudit(t, p.ID, 1, 2)

			// A buyer whose reservation ended buys again; paid too late, it expires once.
			o2 := buy(t, svc, p.ID, 2)
			if o2.ID == c.ID || o2.Status != order.StatusPending {
				t.Fatalf("second order of user 2 = %+v, want a new pending order", o2)
			}
			e.lapse(t, o2.ID)
			for range 2 {
				if _, err := svc.Pay(ctx, p.ID, 2); !errors.Is(err, order.ErrOrderExpired) {
					t.Fatalf("late pay: %v, want ErrOrderExpired", err)
				}
				e.wantAudit(t, p.ID, 1, 2)
			}
			if _, err := svc.Cancel(ctx, p.ID, 2); !errors.Is(err, order.ErrOrderExpired) {
				t.Fatalf("cancel an expired order: %v, want ErrOrderExpired", err)
			}

			// The sweeper expires an abandoned reservation, once.
			o3 := buy(t, svc, p.ID, 3)
			e.lapse(t, o3.ID)
			if st, err := svc.Sweep(ctx, 100); err != nil || st.Expired != 1 {
				t.Fatalf("sweep = %+v, %v; want 1 expired", st, err)
			}
			if st, err := svc.Sweep(ctx, 100); err != nil || st.Expired != 0 {
				t.Fatalf("second sweep = %+v, %v; want nothing", st, err)
			}
			if got, err := svc.OrderOf(ctx, p.ID, 3); err != nil || got.Status != order.StatusExpired {
				t.Fatalf("lookup of an expired reservation = %+v, %v", got, err)
			}
			e.wantAudit(t, p.ID, 1, 2)
			buy(t, svc, p.ID, 3)
			if got, err := svc.OrderOf(ctx, p.ID, 3); err != nil || got.Status != order.StatusPending {
				t.Fatalf("lookup = %+v, %v; want the live order", got, err)
			}
			e.wantAudit(t, p.ID, 2, 1)
		})
	}
}

// TestReturnedUnitResold: a product sold out sells again once a reservation of it is
// cancelled, and the unit is sold once.
func TestReturnedUnitResold(t *testing.T) {
	t.Parallel()
	for _, s := range reservable {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, noSweeper)
			svc, ctx := e.app.Orders, context.Background()
			p := e.windowProduct(t, 1, s, time.Minute)
			buy(t, svc, p.ID, 1)
			if _, err := svc.Purchase(ctx, p.ID, 2); !errors.Is(err, inventory.ErrSoldOut) {
				t.Fatalf("purchase of a sold-out product: %v", err)
			}
			if _, err := svc.Cancel(ctx, p.ID, 1); err != nil {
				t.Fatal(err)
			}
			buy(t, svc, p.ID, 2)
			if _, err := svc.Purchase(ctx, p.ID, 3); !errors.Is(err, inventory.ErrSoldOut) {
				t.Fatalf("purchase after the returned unit was sold: %v", err)
			}
			e.wantAudit(t, p.ID, 1, 0)
		})
	}
}

// TestNoWindowForAbsoluteWriters: naive and lab products refuse a payment window (their
// writes of stock = read - 1 would overwrite a unit given back), bundles refuse products with
// one, and an order of a product without a window is paid from the start.
func TestNoWindowForAbsoluteWriters(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noSweeper)
	ctx := context.Background()
	for _, np := range []inventory.NewProduct{
		{Name: "n", Stock: 1, Strategy: labapi.Naive, PayWithinMS: 1000},
		{Name: "l", Stock: 1, Strategy: labapi.Lab, LabLock: "dlock", PayWithinMS: 1000},
		{Name: "d", Stock: 1, PayWithinMS: inventory.MaxPayWithinMS + 1},
		{Name: "d", Stock: 1, PayWithinMS: -1},
	} {
		if _, err := e.store.Create(ctx, np); !errors.Is(err, inventory.ErrInvalid) {
			t.Errorf("create %+v: %v, want ErrInvalid", np, err)
		}
	}
	w := e.windowProduct(t, 1, inventory.StrategyDlock, time.Minute)
	plain := e.product(t, 1, inventory.StrategyDlock, 0)
	if _, err := e.app.Orders.PurchaseBundle(ctx, []int64{plain.ID, w.ID}, 1); !errors.Is(err, inventory.ErrInvalid) {
		t.Fatalf("bundle with a reservable product: %v, want ErrInvalid", err)
	}
	o := buy(t, e.app.Orders, plain.ID, 1)
	if o.Status != order.StatusPaid || o.PayBy != nil {
		t.Fatalf("order without a window = %+v, want paid, no pay_by", o)
	}
	if got, err := e.app.Orders.Pay(ctx, plain.ID, 1); err != nil || got.Status != order.StatusPaid {
		t.Fatalf("pay an order without a window = %+v, %v; want paid", got, err)
	}
	if _, err := e.app.Orders.Cancel(ctx, plain.ID, 1); !errors.Is(err, order.ErrOrderPaid) {
		t.Fatalf("cancel an order without a window: %v, want ErrOrderPaid", err)
	}
	if _, err := e.app.Orders.Pay(ctx, plain.ID, 2); !errors.Is(err, order.ErrOrderNotFound) {
		t.Fatalf("pay without an order: %v, want ErrOrderNotFound", err)
	}
}
