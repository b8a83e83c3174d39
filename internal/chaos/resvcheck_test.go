//go:build linux

package chaos_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
)

// resvOrder is one order of a reservation sale in PostgreSQL.
type resvOrder struct {
	user   int64
	status string
}

// resvSnapshot is a reservation sale as PostgreSQL (and, for redis and queue, the gate)
// holds it once drained.
type resvSnapshot struct {
	initial, stock                    int64
	orders                            map[int64]resvOrder // id -> order
	pending, paid, expired, cancelled int64
	gateAgrees                        bool   // the gate (redis, queue) agrees with PostgreSQL, or there is none
	gate                              string // what the gate holds, for the log
}

// returned is how many units came back to the stock: each order took one when it was
// written, so initial - stock == orders - returned.
func (v resvSnapshot) returned() int64 { return v.stock - v.initial + int64(len(v.orders)) }

func (v resvSnapshot) String() string {
	return fmt.Sprintf("initial %d, stock %d, orders %d (paid %d, pending %d, expired %d, cancelled %d), units returned %d, resold %d",
		v.initial, v.stock, len(v.orders), v.paid, v.pending, v.expired, v.cancelled, v.returned(), max(0, int64(len(v.orders))-v.initial))
}

// drain stops the sale and waits (90 s at most) until no reservation is pending, every ended
// one's unit is back in the gate too, a queue product's stream is empty, and the gate agrees
// with PostgreSQL (an admission of a killed process settles after PURCHASE_TIMEOUT + 11 s);
// via is a process still up. It returns the snapshot.
func (s *resvSale) drain(t *testing.T, via *apiProc) resvSnapshot {
	t.Helper()
	s.stop()
	var v resvSnapshot
	var left int64
	drained := func() (string, bool) { // what it still waits for
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM orders WHERE product_id = $1 AND (status = 'pending'
			OR status IN ('expired', 'cancelled') AND gate_returned_at IS NULL)`, s.id).Scan(&left); err != nil || left > 0 {
			return fmt.Sprintf("%d orders pending or not back in the gate (%v)", left, err), false
		}
		if s.strategy == "queue" {
			if _, err := apiClient(t, via).AwaitDrained(ctx, s.id, 20*time.Millisecond); err != nil {
				return fmt.Sprintf("the queue to drain: %v", err), false
			}
		}
		v = s.snapshot(t)
		return fmt.Sprintf("the gate to agree with PostgreSQL: %s; %s", v.gate, v), v.gateAgrees
	}
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		waiting, ok := drained()
		if ok {
			return v
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the reservations not drained after 90 s, waiting for %s", s.strategy, waiting)
		}
	}
}

// snapshot reads the sale from PostgreSQL and the gate.
func (s *resvSale) snapshot(t *testing.T) resvSnapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	v := resvSnapshot{orders: map[int64]resvOrder{}, gateAgrees: true}
	if err := s.db.QueryRowContext(ctx, `SELECT initial_stock, stock FROM products WHERE id = $1`, s.id).Scan(&v.initial, &v.stock); err != nil {
		t.Fatal(err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, user_id, status FROM orders WHERE product_id = $1`, s.id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var o resvOrder
		if err := rows.Scan(&id, &o.user, &o.status); err != nil {
			t.Fatal(err)
		}
		v.orders[id] = o
		switch o.status {
		case api.StatusPending:
			v.pending++
		case api.StatusPaid:
			v.paid++
		case api.StatusExpired:
			v.expired++
		case api.StatusCancelled:
			v.cancelled++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if s.strategy == "redis" || s.strategy == "queue" {
		a, err := s.audit.Sale(ctx, s.id, true)
		if err != nil {
			v.gateAgrees, v.gate = false, err.Error()
			return v
		}
		switch {
		case a.Gate != nil:
			v.gateAgrees, v.gate = a.Gate.Agrees, fmt.Sprintf("gate %+v", *a.Gate)
		case a.Queue != nil:
			v.gateAgrees, v.gate = a.Queue.Agrees, fmt.Sprintf("queue %+v", *a.Queue)
		default:
			v.gateAgrees, v.gate = false, "no gate audited"
		}
	}
	return v
}

// violations is what is untrue of the sale, drained, given its snapshot v and its requests
// ops:
//   - nothing pending, stock + paid == initial_stock, and the units returned are the
//     reservations ended (expired or cancelled): none came back twice, none was lost; the
//     gate agrees with PostgreSQL (redis, queue); every sample of the monitor kept the
//     equality;
//   - every answer true: a 201 names an order of its buyer, each order of its own; every
//     order of a buyer is accounted for by a 201, a 202 or a purchase of unknown outcome; an
//     already_purchased names an order of its buyer; a 200 to a payment is an order paid in
//     PostgreSQL, a 200 to a cancel an order cancelled; a 409 order_expired an order expired,
//     order_cancelled cancelled, order_paid paid; a 503 carries Retry-After; no other answer
//     (no 500, no order_not_found for a buyer who had one), and a request goes unanswered
//     only on a process the test killed, or in flight to one while it was frozen (logged);
//   - once every unit is paid (finish), a buyer who buys again (retryAll) is told
//     already_purchased naming its paid order exactly when it has one, else sold_out.
func (s *resvSale) violations(v resvSnapshot, ops []resvOp, monitorBad []string) []string {
	var bad []string
	if v.pending != 0 {
		bad = append(bad, fmt.Sprintf("%d reservations pending after the drain", v.pending))
	}
	if v.stock+v.paid != v.initial || v.returned() != v.expired+v.cancelled || v.stock < 0 {
		bad = append(bad, fmt.Sprintf("stock + paid != initial or units returned != reservations ended: %s", v))
	}
	if !v.gateAgrees {
		bad = append(bad, "the gate disagrees with PostgreSQL: "+v.gate)
	}
	bad = append(bad, monitorBad...)
	paidOf := map[int64]int64{} // user -> its paid order
	for id, o := range v.orders {
		if o.status == api.StatusPaid {
			paidOf[o.user] = id
		}
	}
	cut := 0                      // requests in flight to a frozen process that got no answer
	named := map[int64]bool{}     // orders named by a 201
	accounts := map[int64]int64{} // user -> purchases that may have written an order
	statusOf := func(id int64) string { return v.orders[id].status }
	want := map[string]string{"pay 200": api.StatusPaid, "cancel 200": api.StatusCancelled,
		"pay 409 order_expired": api.StatusExpired, "cancel 409 order_expired": api.StatusExpired,
		"pay 409 order_cancelled": api.StatusCancelled, "cancel 409 order_paid": api.StatusPaid}
	for _, op := range ops {
		who := fmt.Sprintf("user %d %s via %s", op.user, op.outcome(), op.target)
		switch {
		case op.status == 0:
			if f, ok := s.frozen[op.target]; ok && op.sent.Before(f[1]) && op.done.After(f[0]) {
				cut++
			} else if !s.quiet[op.target] {
				bad = append(bad, fmt.Sprintf("%s: no answer (sent %s, failed %s): %v", who,
					op.sent.Format("15:04:05.000"), op.done.Format("15:04:05.000"), op.err))
			}
			if op.kind == "buy" {
				accounts[op.user]++
			}
		case op.status == http.StatusServiceUnavailable:
			if op.retryAfter == "" {
				bad = append(bad, who+": a 503 without Retry-After")
			}
			switch op.code {
			case api.CodeOutcomeUnknown:
				if op.kind == "buy" {
					accounts[op.user]++
				}
			case api.CodeBusy, api.CodeUnavailable:
			default:
				bad = append(bad, who+": an undocumented 503")
			}
		case op.kind == "retry":
			if id := paidOf[op.user]; id != 0 && (op.code != api.CodeAlreadyPurchased || op.order != id) ||
				id == 0 && op.code != api.CodeSoldOut {
				bad = append(bad, fmt.Sprintf("%s (order %d) after the sale; the buyer's paid order is %d", who, op.order, id))
			}
		case op.kind == "buy" && op.status == http.StatusCreated:
			if o, ok := v.orders[op.order]; !ok || o.user != op.user || named[op.order] {
				bad = append(bad, fmt.Sprintf("%s: order %d is %+v in PostgreSQL (found %v), or named twice", who, op.order, o, ok))
			}
			named[op.order] = true
			accounts[op.user]++
		case op.kind == "buy" && op.status == http.StatusAccepted && s.strategy == "queue":
			accounts[op.user]++
		case op.kind == "buy" && op.code == api.CodeAlreadyPurchased:
			if o, ok := v.orders[op.order]; !ok || o.user != op.user {
				bad = append(bad, fmt.Sprintf("%s: order %d is not the buyer's", who, op.order))
			}
		case op.kind == "buy" && op.code == api.CodeSoldOut:
		default:
			st, ok := want[op.outcome()]
			if !ok {
				bad = append(bad, who+": an unexpected answer")
				break
			}
			if got := statusOf(op.order); got != st || v.orders[op.order].user != op.user {
				bad = append(bad, fmt.Sprintf("%s: order %d is %q in PostgreSQL, want %s", who, op.order, got, st))
			}
			if op.status == http.StatusOK && op.orderStatus != st {
				bad = append(bad, fmt.Sprintf("%s: the answer's order is %s", who, op.orderStatus))
			}
		}
	}
	perUser := map[int64]int64{}
	for id, o := range v.orders {
		if !named[id] {
			perUser[o.user]++
		}
	}
	for u, n := range perUser {
		// Orders no 201 named: each needs a 202 or a purchase of unknown outcome (those
		// counted in accounts, less the 201s).
		var created int64
		for _, op := range ops {
			if op.kind == "buy" && op.user == u && op.status == http.StatusCreated {
				created++
			}
		}
		if n > accounts[u]-created {
			bad = append(bad, fmt.Sprintf("user %d has %d orders no 201 named, and only %d purchases that may have written one",
				u, n, accounts[u]-created))
		}
	}
	if cut > 0 {
		s.t.Logf("%s: %d requests in flight to a frozen process got no answer (their connection cut)", s.strategy, cut)
	}
	return bad
}

// verify drains the sale through via, fails t for each violation (at most 10 shown) and if
// the history check (checkHistory) finds the history illegal, and logs the figures. It
// returns the snapshot.
func (s *resvSale) verify(t *testing.T, via *apiProc) resvSnapshot {
	t.Helper()
	v := s.drain(t, via)
	ops := s.opsSnapshot()
	s.mu.Lock()
	monitorBad := s.monitorBad
	s.mu.Unlock()
	bad := s.violations(v, ops, monitorBad)
	s.checkHistory(t, ops)
	for i, b := range bad {
		if i == 10 {
			t.Errorf("%s: ... %d violations in all", s.strategy, len(bad))
			break
		}
		t.Errorf("%s: %s", s.strategy, b)
	}
	n, late := map[string]int{}, map[string]int{}
	for _, op := range ops {
		n[op.outcome()]++
		if op.atDeadline {
			late[op.outcome()]++
		}
	}
	t.Logf("%s: PostgreSQL after the drain: %s; %s", s.strategy, v, v.gate)
	t.Logf("%s: %d requests: %s; of them around pay_by: %s", s.strategy, len(ops), formatCounts(n), formatCounts(late))
	t.Logf("%s: monitor: %d snapshots (%d failed reads), most units held %d of %d, %d broke the equality",
		s.strategy, s.samples.Load(), s.sampleErrs.Load(), s.maxHeld.Load(), s.initial, len(monitorBad))
	return v
}

// sweptBy logs how many units each process gave back, by reason (its
// seckill_reservation_returns_total), skipping the processes that are down.
func sweptBy(t *testing.T, procs ...*apiProc) {
	t.Helper()
	for _, p := range procs {
		t.Logf("%s returned units: expired %v, cancelled %v", p.Name,
			p.Metric("seckill_reservation_returns_total", `reason="expired"`),
			p.Metric("seckill_reservation_returns_total", `reason="cancelled"`))
	}
}
