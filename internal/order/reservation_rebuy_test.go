package order_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// orderStatus reads order id's status in PostgreSQL.
func (e *env) orderStatus(t *testing.T, id int64) string {
	t.Helper()
	var s string
	if err := e.db.Raw(`SELECT status FROM orders WHERE id = ?`, id).Scan(&s).Error; err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRebuyOverdueReservation, for each reservable strategy: a buyer whose reservation is past
// its pay_by, not yet swept, buys again and gets a new order, not already_purchased with the
// dead one, which the purchase expires (its unit back once, to the gate too), whether the
// product is sold out (its mark lifted) or not; a reservation still in its window is answered
// already_purchased as before.
func TestRebuyOverdueReservation(t *testing.T) {
	t.Parallel()
	for _, s := range reservable {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, noSweeper)
			svc, ctx := e.app.Orders, context.Background()
			for _, stock := range []int{1, 2} { // sold out, and a unit left
				p := e.windowProduct(t, stock, s, time.Minute)
				old := buy(t, svc, p.ID, 1)
				if stock == 1 {
					if _, err := svc.Purchase(ctx, p.ID, 2); !errors.Is(err, inventory.ErrSoldOut) {
						t.Fatalf("stock %d: purchase of a sold-out product: %v", stock, err)
					}
				}
				e.lapse(t, old.ID)
				o := buy(t, svc, p.ID, 1) // before any sweep
				if o.ID == old.ID || o.Status != order.StatusPending {
					t.Fatalf("stock %d: rebuy after the deadline = %+v, want a new pending order (old %d)", stock, o, old.ID)
				}
				if got := e.orderStatus(t, old.ID); got != order.StatusExpired {
					t.Fatalf("stock %d: overdue order %d is %s, want expired", stock, old.ID, got)
				}
				e.wantAudit(t, p.ID, 1, stock-1)
				if st, err := svc.Sweep(ctx, 100); err != nil || st.Expired != 0 {
					t.Fatalf("stock %d: sweep after the rebuy = %+v, %v; want nothing left to expire", stock, st, err)
				}
				if _, err := svc.Pay(ctx, p.ID, 1); err != nil {
					t.Fatalf("stock %d: pay the new order: %v", stock, err)
				}
				e.wantAudit(t, p.ID, 1, stock-1)
			}

			// Negative control: a reservation in its window is the buyer's, and stays.
			p := e.windowProduct(t, 2, s, time.Minute)
			live := buy(t, svc, p.ID, 3)
			_, err := svc.Purchase(ctx, p.ID, 3)
			var pe *order.PurchasedError
			if !errors.As(err, &pe) || pe.Order.ID != live.ID || pe.Order.Status != order.StatusPending {
				t.Fatalf("purchase again within the window: %v, want already purchased with order %d", err, live.ID)
			}
			e.wantAudit(t, p.ID, 1, 1)
		})
	}
}
