//go:build linux

package gameday_test

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/history"
)

// historyTimeout bounds one cell's history check.
const historyTimeout = 30 * time.Second

// truth is PostgreSQL's side of one cell, read once every purchase settled (a queue drained).
type truth struct {
	Initial, Stock int             // the product's stock before the sale and now
	Orders         map[int64]int64 // user -> order id
	Duplicates     int             // orders beyond one per user (the unique key forbids them)
}

// readTruth reads the product's stock and orders.
func readTruth(ctx context.Context, db *sql.DB, product int64) (truth, error) {
	t := truth{Orders: map[int64]int64{}}
	if err := db.QueryRowContext(ctx, `SELECT initial_stock, stock FROM products WHERE id = $1`, product).Scan(&t.Initial, &t.Stock); err != nil {
		return t, fmt.Errorf("product %d: %w", product, err)
	}
	rows, err := db.QueryContext(ctx, `SELECT user_id, id FROM orders WHERE product_id = $1`, product)
	if err != nil {
		return t, fmt.Errorf("orders of product %d: %w", product, err)
	}
	defer rows.Close()
	for rows.Next() {
		var user, id int64
		if err := rows.Scan(&user, &id); err != nil {
			return t, err
		}
		if _, dup := t.Orders[user]; dup {
			t.Duplicates++
		}
		t.Orders[user] = id
	}
	return t, rows.Err()
}

// verdict is what the judge found of one cell.
type verdict struct {
	Fault, Strategy string
	Attempts        int
	Classes         map[string]int // attempts by class (attempt.class)
	Lost            int            // sent, and never answered
	Untrue          []string       // answers PostgreSQL contradicts, and the counts that disagree
	QueuedLost      int            // 202 never written: Redis forgot the queued purchase
	Sold, Orders    int
	History         string  // the history checker's verdict
	UnavailableS    float64 // seconds from the fault on whose buyers were all refused
	RecoverS        float64 // from the fault to the last buyer not served
	Err             string  // the judge could not judge (truth unreadable, history malformed)
}

// ok reports whether the cell passes: nothing lost, nothing untrue, the history
// linearizable, and a queued purchase lost only where the fault allows it.
func (v verdict) ok(queueLossAllowed bool) bool {
	return v.Err == "" && v.Lost == 0 && len(v.Untrue) == 0 && v.History == string(history.Linearizable) &&
		(v.QueuedLost == 0 || queueLossAllowed)
}

// judge holds a cell's attempts to PostgreSQL's truth and the history checker, and measures
// its unavailability from fault to end (the end of the fault's selling, before the bursts
// that sell it out).
func judge(c *cell, tr truth, fault, end time.Time) verdict {
	tries := c.attempts()
	v := verdict{Fault: c.Fault, Strategy: c.Strategy, Attempts: len(tries), Classes: map[string]int{},
		Sold: tr.Initial - tr.Stock, Orders: len(tr.Orders)}
	untrue := func(format string, args ...any) { v.Untrue = append(v.Untrue, fmt.Sprintf(format, args...)) }
	if v.Sold != v.Orders+tr.Duplicates {
		untrue("sold %d units but %d orders", v.Sold, v.Orders+tr.Duplicates)
	}
	if tr.Duplicates > 0 {
		untrue("%d duplicate orders", tr.Duplicates)
	}
	if v.Orders > tr.Initial {
		untrue("%d orders for a stock of %d", v.Orders, tr.Initial)
	}
	for _, r := range c.retries { // a retry agrees with PostgreSQL: already_purchased ⇔ an order
		order, has := tr.Orders[r.User]
		switch {
		case has && (r.Status != http.StatusConflict || r.Code != api.CodeAlreadyPurchased || r.Order != order):
			untrue("user %d has order %d but its retry was answered %d %s (order %d)", r.User, order, r.Status, r.Code, r.Order)
		case !has && (r.Status != http.StatusConflict || r.Code != api.CodeSoldOut):
			untrue("user %d has no order but its retry was answered %d %s", r.User, r.Status, r.Code)
		}
	}
	asked := map[int64]bool{}
	var ops []history.Purchase
	for _, a := range tries {
		v.Classes[a.class()]++
		order, has := tr.Orders[a.User]
		if a.Wrote {
			asked[a.User] = true
		}
		switch {
		case a.Wrote && a.Status == 0:
			v.Lost++
		case a.Status == http.StatusCreated && !has:
			untrue("user %d was answered 201 (order %d) and has no order", a.User, a.Order)
		case a.Status == http.StatusCreated && a.Order != order:
			untrue("user %d was answered 201 naming order %d, its order is %d", a.User, a.Order, order)
		case a.Status == http.StatusAccepted && !has:
			v.QueuedLost++
		case has && definite(a):
			untrue("user %d has order %d but was answered %d %s", a.User, order, a.Status, a.Code)
		case a.Status == http.StatusInternalServerError:
			untrue("user %d was answered 500 %s", a.User, a.Code)
		}
		if !a.Wrote {
			continue // nothing reached the service: no operation
		}
		op := history.Purchase{Product: c.Product, User: a.User, Invoke: a.Sent, Outcome: history.PurchaseOutcome(a.Status, a.Code),
			Status: a.Status, Code: a.Code, Order: a.Order}
		if a.Status != 0 {
			op.Complete = a.Done
		}
		ops = append(ops, op)
	}
	for user, order := range tr.Orders {
		if !asked[user] {
			untrue("order %d of user %d, who sent no purchase", order, user)
		}
	}
	res, err := history.CheckPurchases(ops, history.Sale{Stock: map[int64]int{c.Product: tr.Initial},
		Orders: map[int64]map[int64]int64{c.Product: tr.Orders}}, historyTimeout, "")
	if err != nil {
		v.Err = err.Error()
	}
	v.History = string(res.Verdict)
	for _, r := range res.Reasons {
		untrue("history: %s", r)
	}
	v.UnavailableS, v.RecoverS = unavailability(tries, fault, end)
	return v
}

// definite reports whether the answer says that nothing was bought: a 409, or a 503 the API
// documents as writing nothing (busy, unavailable), HAProxy's own 503 included.
func definite(a attempt) bool {
	return history.PurchaseOutcome(a.Status, a.Code) == history.Fail && a.Status != 0
}

// unavailability measures, from fault to end: the seconds (whole seconds of sending time) in
// which buyers tried and none was served, and the time from fault to the sending of the last
// buyer not served (0 when every buyer was).
func unavailability(tries []attempt, fault, end time.Time) (unavailable, recover float64) {
	tried, served := map[int]bool{}, map[int]bool{}
	for _, a := range tries {
		if a.Sent.Before(fault) || !a.Sent.Before(end) {
			continue
		}
		sec := int(a.Sent.Sub(fault) / time.Second)
		tried[sec] = true
		if a.served() {
			served[sec] = true
		} else {
			recover = math.Max(recover, a.Sent.Sub(fault).Seconds())
		}
	}
	for sec := range tried {
		if !served[sec] {
			unavailable++
		}
	}
	return unavailable, math.Round(recover*10) / 10
}
