//go:build linux

package chaos_test

import (
	"context"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
)

// controls are the negative controls of a drained reservation sale, each undone afterwards:
// violations must see
//   - a unit given back twice (test-only SQL adds a unit to the stock for an order already
//     ended): the equality breaks, in the drained sale and in the monitor's sample;
//   - a paid order returned: PostgreSQL refuses to end a paid order (the migration's
//     orders_final_status trigger), and were it to happen, the payment answered 200 would be
//     untrue (the snapshot, changed in memory, has the order expired and its unit back: the
//     equality still holds there, the answers do not);
//   - for redis and queue, a gate a unit out of step with PostgreSQL;
//
// and the history check must see its own (historyControls).
func (s *resvSale) controls(t *testing.T, v resvSnapshot) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ops := s.opsSnapshot()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := s.db.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}

	if v.expired+v.cancelled == 0 {
		t.Fatalf("%s: no reservation ended: the controls need one", s.strategy)
	}
	defer s.historyControls(t, ops)
	exec(`UPDATE products SET stock = stock + 1 WHERE id = $1`, s.id)
	caught := s.violations(s.snapshot(t), ops, nil)
	sampled, err := s.sample()
	exec(`UPDATE products SET stock = stock - 1 WHERE id = $1`, s.id)
	if sampled == "" || err != nil {
		t.Errorf("%s: control: the monitor missed a unit returned twice (%v)", s.strategy, err)
	}
	if len(caught) == 0 {
		t.Errorf("%s: control: a unit returned twice went unnoticed", s.strategy)
	} else {
		t.Logf("%s: control, a unit returned twice: %s", s.strategy, caught[0])
	}

	var paid int64
	for _, op := range ops {
		if op.kind == "pay" && op.status == http.StatusOK {
			paid = op.order
			break
		}
	}
	if paid == 0 {
		t.Fatalf("%s: no payment answered 200: the control needs one", s.strategy)
	}
	_, err = s.db.ExecContext(ctx, `UPDATE orders SET status = 'expired', paid_at = NULL, ended_at = pay_by WHERE id = $1`, paid)
	if err == nil || !strings.Contains(err.Error(), "orders_final_status") {
		t.Errorf("%s: control: PostgreSQL let paid order %d expire: %v", s.strategy, paid, err)
	}
	w := v
	w.orders = maps.Clone(v.orders)
	w.orders[paid] = resvOrder{user: v.orders[paid].user, status: api.StatusExpired}
	w.paid, w.expired, w.stock = w.paid-1, w.expired+1, w.stock+1
	caught = s.violations(w, ops, nil)
	if len(caught) == 0 {
		t.Errorf("%s: control: a paid order returned went unnoticed", s.strategy)
	} else {
		t.Logf("%s: control, paid order %d returned: %s", s.strategy, paid, caught[0])
	}

	if s.strategy != "redis" && s.strategy != "queue" {
		return
	}
	key := s.b.keys().GateStock(s.id)
	if err := s.rdb.IncrBy(ctx, key, 1).Err(); err != nil {
		t.Fatal(err)
	}
	caught = s.violations(s.snapshot(t), ops, nil)
	if err := s.rdb.DecrBy(ctx, key, 1).Err(); err != nil {
		t.Fatal(err)
	}
	if len(caught) == 0 {
		t.Errorf("%s: control: a unit returned twice to the gate went unnoticed", s.strategy)
	} else {
		t.Logf("%s: control, a unit returned twice to the gate: %s", s.strategy, caught[0])
	}
}
