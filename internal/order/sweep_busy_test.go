package order_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
	"github.com/seckill/seckill/internal/testenv"
)

// TestSweepAroundBusyProduct: 40 sold-out products of every reservable strategy whose
// reservations expire together, and a pessimistic product whose row a transaction holds from
// before that deadline until 6 s after it (longer than a return may take, half of
// SOLDOUT_HOLD): the app's own sweeper, every SWEEP_INTERVAL (1 s), ends every other
// product's reservation within SWEEP_INTERVAL + 2 s of its pay_by (a pass that just missed
// it, then the next one, each well under a second), and the busy product's within that of the
// moment its row is free. Lateness is measured on PostgreSQL's clock, ended_at - pay_by.
func TestSweepAroundBusyProduct(t *testing.T) {
	t.Parallel()
	const (
		n        = 40
		interval = time.Second // the default SWEEP_INTERVAL
		bound    = interval + 2*time.Second
		held     = 6 * time.Second
	)
	e := newEnv(t, order.Config{SweepInterval: interval})
	svc, ctx := e.app.Orders, context.Background()
	busy := e.windowProduct(t, 1, inventory.StrategyPessimistic, time.Hour) // the lowest id: swept first by id
	buy(t, svc, busy.ID, 1)
	ids := make([]int64, n)
	for i := range ids {
		p := e.windowProduct(t, 1, reservable[i%len(reservable)], time.Hour)
		buy(t, svc, p.ID, int64(i+2))
		ids[i] = p.ID
	}
	marked := 0
	for _, id := range ids {
		if e.rdb.Exists(ctx, e.app.Keys.SoldOut(id)).Val() == 1 {
			marked++
		}
	}

	tx := e.db.Begin()
	defer tx.Rollback()
	if err := tx.Exec(`SELECT id FROM products WHERE id = ? FOR UPDATE`, busy.ID).Error; err != nil {
		t.Fatal(err)
	}
	mustExec(t, e.db, `UPDATE orders SET pay_by = clock_timestamp() + interval '1 second' WHERE product_id = ANY(CAST(? AS bigint[]))`,
		pgIDs(append(ids, busy.ID)))
	freed := make(chan time.Time, 1)
	go func() {
		time.Sleep(time.Second + held)
		var at time.Time
		tx.Raw(`SELECT clock_timestamp()`).Scan(&at)
		tx.Rollback()
		freed <- at
	}()

	pending := func(ids ...int64) int64 {
		var left int64
		if err := e.db.Raw(`SELECT count(*) FROM orders WHERE status = 'pending' AND product_id = ANY(CAST(? AS bigint[]))`,
			pgIDs(ids)).Scan(&left).Error; err != nil {
			t.Fatal(err)
		}
		return left
	}
	testenv.Eventually(t, 90*time.Second, "the 40 products' reservations to end", func() bool {
		time.Sleep(50 * time.Millisecond)
		return pending(ids...) == 0
	})
	var busyEndedAt time.Time
	testenv.Eventually(t, 30*time.Second, "the busy product's reservation to end", func() bool {
		time.Sleep(50 * time.Millisecond)
		return pending(busy.ID) == 0
	})
	freedAt := <-freed
	if err := e.db.Raw(`SELECT ended_at FROM orders WHERE product_id = ?`, busy.ID).Row().Scan(&busyEndedAt); err != nil {
		t.Fatal(err)
	}

	var late []float64
	if err := e.db.Raw(`SELECT extract(epoch FROM ended_at - pay_by)::float8 FROM orders
		WHERE product_id = ANY(CAST(? AS bigint[])) ORDER BY 1`, pgIDs(ids)).Scan(&late).Error; err != nil {
		t.Fatal(err)
	}
	if len(late) != n {
		t.Fatalf("%d ended reservations of the 40 products, want %d", len(late), n)
	}
	median, maxLate := secs(late[n/2-1]+late[n/2])/2, secs(late[n-1])
	t.Logf("%d sold-out products (%d marked in Redis) expiring together, one busy for %v past the deadline: lateness min %v, median %v, max %v (bound %v); the busy product's ended %v after its row was freed",
		n, marked, held, secs(late[0]).Round(time.Millisecond), median.Round(time.Millisecond), maxLate.Round(time.Millisecond),
		bound, busyEndedAt.Sub(freedAt).Round(time.Millisecond))
	if maxLate > bound {
		t.Errorf("a reservation ended %v past its pay_by, want within %v (SWEEP_INTERVAL + 2 s)", maxLate, bound)
	}
	if !busyEndedAt.After(freedAt) || busyEndedAt.Sub(freedAt) > bound {
		t.Errorf("busy product's reservation ended at %v, its row freed at %v: want after, within %v", busyEndedAt, freedAt, bound)
	}
	for _, id := range append(ids, busy.ID) {
		e.wantAudit(t, id, 0, 1)
	}
}

// secs is s seconds as a Duration.
func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// pgIDs is ids as a PostgreSQL array literal.
func pgIDs(ids []int64) string {
	b := []byte{'{'}
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(append(b, '}'))
}

// TestSweepPerProduct: one pass of the sweeper with four products whose reservations are
// past their pay_by: one whose row a transaction holds throughout (busy), one whose return
// fails (its stock already at its initial stock, which PostgreSQL's check refuses to exceed),
// and two others. The pass returns without waiting for the busy row, with an error naming the
// failed product only, having expired the two others' reservations; the busy and the failed
// products' stay pending for the next pass, which ends the busy one's once its row is free.
func TestSweepPerProduct(t *testing.T) {
	t.Parallel()
	e := newEnv(t, noSweeper)
	svc, ctx := e.app.Orders, context.Background()
	var ps []inventory.Product
	for i := range 4 {
		p := e.windowProduct(t, 2, reservable[i%len(reservable)], time.Minute)
		e.lapse(t, buy(t, svc, p.ID, 1).ID)
		ps = append(ps, p)
	}
	busy, failing, others := ps[0], ps[1], ps[2:]
	mustExec(t, e.db, `UPDATE products SET stock = initial_stock WHERE id = ?`, failing.ID)
	tx := e.db.Begin()
	defer tx.Rollback()
	if err := tx.Exec(`SELECT id FROM products WHERE id = ? FOR UPDATE`, busy.ID).Error; err != nil {
		t.Fatal(err)
	}

	st, err := svc.Sweep(ctx, 100)
	t.Logf("pass: %+v, %v", st, err)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("product %d:", failing.ID)) ||
		strings.Contains(err.Error(), fmt.Sprintf("product %d:", busy.ID)) {
		t.Errorf("pass error = %v, want one naming product %d (failed), not %d (busy)", err, failing.ID, busy.ID)
	}
	if st.Expired != len(others) {
		t.Errorf("pass expired %d, want %d (the products neither busy nor failing)", st.Expired, len(others))
	}
	for _, p := range others {
		e.wantAudit(t, p.ID, 0, 2)
	}
	for _, p := range []inventory.Product{busy, failing} {
		if a := e.audit(t, p.ID); a.Pending != 1 {
			t.Errorf("product %d: %d pending, want its reservation left for the next pass", p.ID, a.Pending)
		}
	}

	tx.Rollback()
	if st, _ := svc.Sweep(ctx, 100); st.Expired != 1 {
		t.Errorf("pass after the busy row was freed expired %d, want 1", st.Expired)
	}
	e.wantAudit(t, busy.ID, 0, 2)
}
