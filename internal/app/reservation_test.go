package app_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/order"
)

// answer is one pay or cancel a buyer was answered, to check against PostgreSQL after the sale.
type answer struct {
	what   string // "pay" or "cancel"
	order  int64
	status int
	code   string
}

// TestReservationSale, for each reservable strategy: a sale of reservations over real HTTP to
// two API processes, each sweeping every 25 ms, with more buyers than units: a quarter pay at
// once, a quarter cancel, a quarter walk away, a quarter pay around their deadline (racing
// the sweepers), and buyers refused sold_out try again as units come back. While it runs,
// every snapshot of PostgreSQL has stock + pending + paid == initial_stock; after a drain no
// reservation is pending, the equality holds (every ended reservation gave its unit back
// exactly once: a unit returned twice or never breaks it), every answer is true (a 200 paid
// is paid in PostgreSQL, a 409 order_expired expired, a 200 cancelled cancelled), and Redis
// agrees with PostgreSQL. The negative control gives one unit back twice and is caught.
func TestReservationSale(t *testing.T) {
	t.Parallel()
	for _, strategy := range []string{"dlock", "pessimistic", "optimistic", "redis", "queue"} {
		t.Run(strategy, func(t *testing.T) {
			t.Parallel()
			const stock, buyers, window = 12, 48, 2 * time.Second
			cfg := order.Config{SweepInterval: 25 * time.Millisecond, SweepBatch: 5}
			a := newStack(t, cfg)
			b := newStackOn(t, a.DB, a.Redis, a.Prefix, cfg)
			st := stock
			p, err := a.API.CreateProduct(context.Background(), api.NewProduct{Name: "r", Stock: &st, Strategy: strategy,
				PayWithinMS: int(window.Milliseconds())})
			if err != nil {
				t.Fatal(err)
			}

			stop := make(chan struct{})
			monitored := make(chan []string)
			go func() { monitored <- monitor(a.DB, p.ID, stock, stop) }()

			var mu sync.Mutex
			var answers []answer
			var wg sync.WaitGroup
			end := time.Now().Add(6 * time.Second)
			for u := int64(1); u <= buyers; u++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					api := []*client.Client{a.API, b.API}[u%2]
					for got := 0; got < 2 && time.Now().Before(end); {
						o, ok := buyOnce(t, api, p.ID, u)
						if !ok {
							time.Sleep(30 * time.Millisecond)
							continue
						}
						got++
						if ans, acted := act(t, api, o, u, window); acted {
							mu.Lock()
							answers = append(answers, ans)
							mu.Unlock()
						}
					}
				}()
			}
			wg.Wait()
			drain(t, a.DB, p.ID)
			close(stop)
			for _, v := range <-monitored {
				t.Error(v)
			}
			for _, v := range saleViolations(t, a.DB, p.ID, stock) {
				t.Error(v)
			}
			checkAnswers(t, a.DB, answers)
			au := a.audit(t, p.ID)
			if !au.Consistent || au.Pending != 0 {
				t.Errorf("audit after the drain = %+v (redis %+v, queue %+v), want consistent, nothing pending", au, au.Redis, au.Queue)
			}
			tally := map[string]int{}
			for _, a := range answers {
				tally[fmt.Sprintf("%s %d %s", a.what, a.status, a.code)]++
			}
			t.Logf("%s: answers %v; audit %+v, redis %+v, queue %+v", strategy, tally, au, au.Redis, au.Queue)

			// Negative controls: a unit given back twice (a test-only second return of an
			// ended reservation) is caught, and so is a unit never given back.
			if au.Stock < stock {
				mustExecApp(t, a.DB, `UPDATE products SET stock = stock + 1 WHERE id = ?`, p.ID)
				if v := saleViolations(t, a.DB, p.ID, stock); len(v) == 0 {
					t.Error("negative control: a unit returned twice went unnoticed")
				}
				mustExecApp(t, a.DB, `UPDATE products SET stock = stock - 1 WHERE id = ?`, p.ID)
			}
			if au.Stock > 0 {
				mustExecApp(t, a.DB, `UPDATE products SET stock = stock - 1 WHERE id = ?`, p.ID)
				if v := saleViolations(t, a.DB, p.ID, stock); len(v) == 0 {
					t.Error("negative control: a unit never returned went unnoticed")
				}
			}
		})
	}
}

// buyOnce tries one purchase of product id for user, waiting for a queued one to be written,
// and returns the order, or false when there was none to be had (sold out, busy).
func buyOnce(t *testing.T, c *client.Client, id, user int64) (api.Order, bool) {
	ctx := context.Background()
	start := time.Now()
	o, err := c.Purchase(ctx, id, user)
	var accepted *client.AcceptedError
	var p *api.Problem
	switch {
	case err == nil:
		return o, true
	case errors.As(err, &p) && p.Code == api.CodeAlreadyPurchased:
		return api.Order{}, false // an order of an earlier try, ended meanwhile or acted on already
	case errors.As(err, &accepted):
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			o, err := c.OrderOf(ctx, id, user)
			switch {
			case err != nil:
			case o.Status == api.StatusPending || o.Status == api.StatusPaid:
				return o, true
			case o.CreatedAt.After(start.Add(-time.Second)): // written, and expired before we looked
				return api.Order{}, false
			}
		}
		t.Errorf("user %d: accepted, never written", user)
		return api.Order{}, false
	case errors.As(err, &p) && (p.Code == api.CodeSoldOut || p.Status == http.StatusServiceUnavailable):
		return api.Order{}, false
	}
	t.Errorf("user %d buys: %v", user, err)
	return api.Order{}, false
}

// act does what buyer user does with its reservation o: pay at once, cancel, walk away, or
// pay around its deadline.
func act(t *testing.T, c *client.Client, o api.Order, user int64, window time.Duration) (answer, bool) {
	ctx := context.Background()
	what := "pay"
	var err error
	var got api.Order
	switch user % 4 {
	case 1:
		what = "cancel"
	case 2:
		return answer{}, false
	case 3:
		time.Sleep(window*3/4 + time.Duration(user%8)*window/16) // 0.75 to 1.19 windows
	}
	// A 503 (busy, unavailable: nothing changed; outcome_unknown: maybe) is asked again after a
	// while, as a client does: both routes are idempotent. A loaded machine answers some busy.
	var p *api.Problem
	for attempt := 1; ; attempt++ {
		if what == "pay" {
			got, err = c.Pay(ctx, o.ProductID, user)
		} else {
			got, err = c.Cancel(ctx, o.ProductID, user)
		}
		if !errors.As(err, &p) || p.Status != http.StatusServiceUnavailable || attempt == 5 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	ans := answer{what: what, order: got.ID, status: http.StatusOK}
	switch {
	case err == nil:
	case errors.As(err, &p) && p.Status == http.StatusServiceUnavailable:
		t.Logf("user %d %s: 503 %s five times", user, what, p.Code)
		return answer{}, false
	case errors.As(err, &p):
		ans.status, ans.code, ans.order = p.Status, p.Code, p.OrderID
	default:
		t.Errorf("user %d %s: %v", user, what, err)
		return answer{}, false
	}
	return ans, true
}

// monitor samples product id's sale until stop closes and returns each snapshot that broke
// stock + pending + paid == initial or had more than initial units held.
func monitor(gdb *gorm.DB, id int64, initial int, stop <-chan struct{}) []string {
	var bad []string
	for {
		select {
		case <-stop:
			return bad
		case <-time.After(5 * time.Millisecond):
		}
		var s struct{ Stock, Pending, Paid int }
		err := gdb.Raw(`SELECT (SELECT stock FROM products WHERE id = @id) AS stock,
			count(*) FILTER (WHERE status = 'pending') AS pending, count(*) FILTER (WHERE status = 'paid') AS paid
			FROM orders WHERE product_id = @id`, map[string]any{"id": id}).Scan(&s).Error
		if err != nil {
			bad = append(bad, fmt.Sprintf("monitor: %v", err))
			return bad
		}
		if s.Stock+s.Pending+s.Paid != initial || s.Pending+s.Paid > initial {
			bad = append(bad, fmt.Sprintf("snapshot %+v breaks stock + pending + paid == %d", s, initial))
		}
	}
}

// drain waits until product id has no pending reservation and every ended one's unit is back
// in the gate too (the sweepers do it).
func drain(t *testing.T, gdb *gorm.DB, id int64) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var left int64
		err := gdb.Raw(`SELECT count(*) FROM orders WHERE product_id = ? AND (status = 'pending'
			OR status IN ('expired', 'cancelled') AND gate_returned_at IS NULL)`, id).Scan(&left).Error
		if err != nil {
			t.Fatal(err)
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("product %d: %d reservations still pending or not back in the gate after 60 s", id, left)
		}
	}
}

// saleViolations checks product id after a drain: nothing pending, and stock + paid ==
// initial, which holds exactly when every ended reservation gave its unit back once (each
// order took one unit when it was written: initial - stock == orders - returns).
func saleViolations(t *testing.T, gdb *gorm.DB, id int64, initial int) []string {
	t.Helper()
	var s struct{ Stock, Pending, Paid, Ended, Orders int }
	err := gdb.Raw(`SELECT (SELECT stock FROM products WHERE id = @id) AS stock,
		count(*) FILTER (WHERE status = 'pending') AS pending, count(*) FILTER (WHERE status = 'paid') AS paid,
		count(*) FILTER (WHERE status IN ('expired', 'cancelled')) AS ended, count(*) AS orders
		FROM orders WHERE product_id = @id`, map[string]any{"id": id}).Scan(&s).Error
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	if s.Pending != 0 {
		bad = append(bad, fmt.Sprintf("%d reservations still pending after the drain", s.Pending))
	}
	if returned := s.Stock - (initial - s.Orders); returned != s.Ended {
		bad = append(bad, fmt.Sprintf("%+v: %d units came back for %d ended reservations", s, returned, s.Ended))
	}
	return bad
}

// checkAnswers fails the test for each answer PostgreSQL contradicts.
func checkAnswers(t *testing.T, gdb *gorm.DB, answers []answer) {
	t.Helper()
	want := map[string]string{"pay 200": "paid", "cancel 200": "cancelled", "pay 409 order_expired": "expired",
		"cancel 409 order_expired": "expired", "pay 409 order_cancelled": "cancelled", "cancel 409 order_paid": "paid"}
	for _, a := range answers {
		key := fmt.Sprintf("%s %d", a.what, a.status)
		if a.code != "" {
			key += " " + a.code
		}
		status, ok := want[key]
		if !ok {
			t.Errorf("order %d: unexpected answer %s", a.order, key)
			continue
		}
		var got string
		if err := gdb.Raw(`SELECT status FROM orders WHERE id = ?`, a.order).Scan(&got).Error; err != nil {
			t.Fatal(err)
		}
		if got != status {
			t.Errorf("order %d answered %s, is %s in PostgreSQL", a.order, key, got)
		}
	}
}

func mustExecApp(t *testing.T, gdb *gorm.DB, sql string, args ...any) {
	t.Helper()
	if err := gdb.Exec(sql, args...).Error; err != nil {
		t.Fatal(err)
	}
}
