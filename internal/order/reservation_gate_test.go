package order_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// endInPostgres ends user's pending reservation of product id in PostgreSQL alone and gives
// its unit back there, as a process killed between a return's commit and the gate leaves it
// (having lifted the sold-out mark before its commit).
func (e *env) endInPostgres(t *testing.T, id, user int64) {
	t.Helper()
	if err := e.app.SoldOut.Lift(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	mustExec(t, e.db, `WITH e AS (UPDATE orders SET status = 'cancelled', ended_at = clock_timestamp()
			WHERE product_id = ? AND user_id = ? AND status = 'pending' RETURNING id)
		UPDATE products SET stock = stock + (SELECT count(*) FROM e) WHERE id = ?`, id, user, id)
}

// TestGateReturnRedriven, for the redis and queue strategies: a return whose gate part is
// missing (its process killed after the commit) leaves the gate behind PostgreSQL until the
// sweeper drives it again, once however often it runs; a gate Redis lost, seeded meanwhile
// from PostgreSQL, counts the unit already and is not given it twice.
func TestGateReturnRedriven(t *testing.T) {
	t.Parallel()
	for _, s := range []inventory.Strategy{inventory.StrategyRedis, inventory.StrategyQueue} {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, noSweeper)
			svc, ctx := e.app.Orders, context.Background()
			p := e.windowProduct(t, 3, s, time.Minute)
			for u := int64(1); u <= 3; u++ {
				buy(t, svc, p.ID, u)
			}
			e.endInPostgres(t, p.ID, 1)
			mustExec(t, e.db, `UPDATE orders SET ended_at = ended_at - interval '1 minute' WHERE user_id = 1`)
			if a := e.audit(t, p.ID); a.Consistent {
				t.Fatalf("audit with the gate's part missing = %+v: the check below would prove nothing", a)
			}
			for range 2 {
				if _, err := svc.Sweep(ctx, 100); err != nil {
					t.Fatal(err)
				}
				e.wantAudit(t, p.ID, 2, 1)
			}

			// Redis loses the gate while a return's gate part is missing: the seeding counts the
			// unit from PostgreSQL, and the return driven afterwards does not count it again.
			e.endInPostgres(t, p.ID, 2)
			mustExec(t, e.db, `UPDATE orders SET ended_at = ended_at - interval '1 minute' WHERE user_id = 2 AND status = 'cancelled'`)
			flushPrefix(t, e.rdb, e.prefix)
			buy(t, svc, p.ID, 4) // seeds the gate from PostgreSQL
			if _, err := svc.Sweep(ctx, 100); err != nil {
				t.Fatal(err)
			}
			e.wantAudit(t, p.ID, 2, 1)
			buy(t, svc, p.ID, 2) // the buyer whose reservation ended buys again
			e.wantAudit(t, p.ID, 3, 0)
		})
	}
}

// TestSweepersRace: two processes sweeping the same expired reservations at once, while
// their buyers cancel them, pay them late or buy again, end each once: the units that came
// back are exactly the reservations that ended, none was both paid and returned, and every
// buyer who bought again got a new order.
func TestSweepersRace(t *testing.T) {
	t.Parallel()
	for _, s := range reservable {
		t.Run(string(s), func(t *testing.T) {
			t.Parallel()
			const n = 40
			e := newEnv(t, noSweeper)
			other := newService(t, e, process{}, noSweeper)
			ctx := context.Background()
			p := e.windowProduct(t, n, s, time.Minute)
			for u := int64(1); u <= n; u++ {
				buy(t, e.app.Orders, p.ID, u)
			}
			mustExec(t, e.db, `UPDATE orders SET created_at = created_at - interval '1 hour', pay_by = pay_by - interval '1 hour'
				WHERE product_id = ?`, p.ID)
			var wg sync.WaitGroup
			var mu sync.Mutex
			expired, rebought := 0, 0
			for i, svc := range []*order.Service{e.app.Orders, other, e.app.Orders, other} {
				wg.Add(2)
				go func() {
					defer wg.Done()
					for range 5 {
						st, err := svc.Sweep(ctx, 7)
						if err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						expired += st.Expired
						mu.Unlock()
					}
				}()
				go func() {
					defer wg.Done()
					for u := int64(1 + i); u <= n; u += 4 {
						switch u % 3 {
						case 0:
							svc.Cancel(ctx, p.ID, u)
						case 1:
							svc.Pay(ctx, p.ID, u)
						default:
							if err := rebuy(svc, p.ID, u); err != nil {
								t.Errorf("user %d buys again after the deadline: %v", u, err)
								continue
							}
							mu.Lock()
							rebought++
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			if _, err := e.app.Orders.Sweep(ctx, 100); err != nil {
				t.Fatal(err)
			}
			a := e.audit(t, p.ID)
			if a.Orders != rebought || a.Ended != n || a.Stock != n-rebought || !a.Consistent {
				t.Fatalf("audit = %+v (redis %+v, queue %+v), want %d ended, every unit back once, %d new orders, consistent",
					a, a.Redis, a.Queue, n, rebought)
			}
			t.Logf("sweepers expired %d of %d, payments, cancels and purchases the rest; %d bought again", expired, n, rebought)
		})
	}
}

// rebuy buys product id for user on s, whose reservation of it is past its pay_by, and
// returns an error unless that gets a new order (waiting for a queued purchase's).
func rebuy(s *order.Service, id, user int64) error {
	ctx := context.Background()
	_, err := s.Purchase(ctx, id, user)
	deadline := time.Now().Add(10 * time.Second)
	// ErrBusy: the old order's unit is on its way back to the gate (a sweeper racing); a client
	// retries, as Retry-After tells it.
	for ; errors.Is(err, order.ErrBusy) && time.Now().Before(deadline); _, err = s.Purchase(ctx, id, user) {
		time.Sleep(20 * time.Millisecond)
	}
	for errors.Is(err, order.ErrAccepted) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		var o order.Order
		if o, err = s.OrderOf(ctx, id, user); err == nil && o.Status != order.StatusPending {
			err = order.ErrAccepted // its old order, ended; the new one is not written yet
		}
	}
	return err
}
