//go:build linux

package chaos_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// pgAudit is the sale as PostgreSQL records it.
type pgAudit struct {
	initial, stock, orders, dupes int
	fence                         int64
	buyers                        map[int64]bool
}

func (s *sale) auditPG(t *testing.T) pgAudit {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a := pgAudit{buyers: map[int64]bool{}}
	err := s.db.QueryRowContext(ctx, `SELECT p.initial_stock, p.stock, p.fence,
		(SELECT count(*) FROM orders o WHERE o.product_id = p.id),
		(SELECT count(*) FROM (SELECT user_id FROM orders WHERE product_id = p.id
			GROUP BY user_id HAVING count(*) > 1) d)
		FROM products p WHERE p.id = $1`, s.id).Scan(&a.initial, &a.stock, &a.fence, &a.orders, &a.dupes)
	if err != nil {
		t.Fatalf("audit product %d in PostgreSQL: %v", s.id, err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT user_id FROM orders WHERE product_id = $1`, s.id)
	if err != nil {
		t.Fatalf("orders of product %d: %v", s.id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var u int64
		if err := rows.Scan(&u); err != nil {
			t.Fatal(err)
		}
		a.buyers[u] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return a
}

func (a pgAudit) String() string {
	return fmt.Sprintf("initial %d, stock %d, orders %d, duplicate buyers %d, fence %d",
		a.initial, a.stock, a.orders, a.dupes, a.fence)
}

// apiAudit is GET /api/v1/products/{id}/audit.
type apiAudit struct {
	Orders, Stock, Sold, Oversold int
	DuplicateUsers                int `json:"duplicate_users"`
	Consistent                    bool
	Redis                         *struct {
		Seeded        bool
		Stock, Buyers int64
		Agrees        bool
	}
}

// verify asserts what every fault test promises, once the sale is over:
//   - PostgreSQL: orders == initial_stock - stock, stock == 0 (sold out), no buyer twice;
//   - every buyer answered 201 has an order, and every order belongs to a buyer answered
//     201 or not answered at all (noAnswerOK says which requests may go unanswered: those
//     to a process the test killed, or cut off): no error answer hides a sale;
//   - no 5xx but 503 busy / unavailable / outcome_unknown with Retry-After, and no other
//     unexpected answer; an outcome_unknown (the process could not ask PostgreSQL what became
//     of its COMMIT) is resolved the way the README tells clients to, with GET
//     /api/v1/products/{id}/orders/{user_id} through via, which must agree with PostgreSQL;
//   - the API's own audit (through via) says consistent.
func (s *sale) verify(t *testing.T, via *apiProc, noAnswerOK func(answer) bool) {
	t.Helper()
	pg := s.auditPG(t)
	t.Logf("%s: answers %s; PostgreSQL: %s", s.strategy, s.summary(), pg)
	if pg.stock < 0 || pg.orders != pg.initial-pg.stock || pg.dupes != 0 {
		t.Errorf("%s: PostgreSQL audit inconsistent: %s", s.strategy, pg)
	}
	if pg.stock != 0 {
		t.Errorf("%s: not sold out: %s", s.strategy, pg)
	}
	s.checkAnswers(t, pg, via, noAnswerOK)
	s.checkAPIAudit(t, via)
}

func (s *sale) checkAnswers(t *testing.T, pg pgAudit, via *apiProc, noAnswerOK func(answer) bool) {
	t.Helper()
	s.mu.Lock()
	answers := append([]answer(nil), s.answers...)
	s.mu.Unlock()
	bad := 0
	fail := func(format string, args ...any) {
		if bad++; bad <= 8 {
			t.Errorf(s.strategy+": "+format, args...)
		}
	}
	for _, a := range answers {
		switch {
		case a.status == http.StatusCreated:
			if !pg.buyers[a.user] {
				fail("user %d was answered 201 by %s but has no order", a.user, a.target)
			}
			continue
		case a.status == 0:
			if !noAnswerOK(a) {
				fail("user %d got no answer from %s: %v", a.user, a.target, a.err)
			}
			continue
		case a.status == http.StatusServiceUnavailable && a.code == "outcome_unknown":
			t.Logf("%s: user %d answered outcome_unknown by %s; resolving it", s.strategy, a.user, a.target)
			if a.retryAfter == "" {
				fail("user %d: %s answered 503 outcome_unknown without Retry-After", a.user, a.target)
			}
			status, body := via.Get(fmt.Sprintf("/api/v1/products/%d/orders/%d", s.id, a.user), "")
			if (status == http.StatusOK) != pg.buyers[a.user] || status != http.StatusOK && status != http.StatusNotFound {
				fail("user %d: the order lookup says %d %s, PostgreSQL has an order: %v", a.user, status, body, pg.buyers[a.user])
			}
			continue
		case a.status >= 500 && (a.status != http.StatusServiceUnavailable || a.code != "busy" && a.code != "unavailable"):
			fail("user %d: %s answered %s: a 5xx other than 503 busy/unavailable/outcome_unknown", a.user, a.target, a.outcome())
		case a.status == http.StatusServiceUnavailable && a.retryAfter == "":
			fail("user %d: %s answered 503 %s without Retry-After", a.user, a.target, a.code)
		case a.status < 500 && (a.status != http.StatusConflict || a.code != "sold_out"):
			fail("user %d (a new buyer): %s answered %s", a.user, a.target, a.outcome())
		}
		if pg.buyers[a.user] {
			fail("user %d has an order but %s answered %s", a.user, a.target, a.outcome())
		}
	}
	if bad > 8 {
		t.Errorf("%s: ... %d bad answers in all", s.strategy, bad)
	}
}

func (s *sale) checkAPIAudit(t *testing.T, via *apiProc) {
	t.Helper()
	status, body := via.Get(fmt.Sprintf("/api/v1/products/%d/audit", s.id), adminToken)
	var a apiAudit
	if status != http.StatusOK || json.Unmarshal(body, &a) != nil {
		t.Errorf("%s: GET audit through %s = %d %s", s.strategy, via.Name, status, body)
		return
	}
	if !a.Consistent {
		t.Errorf("%s: the API's audit is not consistent: %s", s.strategy, body)
	}
	if s.strategy == "redis" && (a.Redis == nil || !a.Redis.Agrees) {
		t.Errorf("%s: the Redis gate and PostgreSQL disagree: %s", s.strategy, body)
	}
}

// noneUnanswered: every request must get an HTTP answer.
func noneUnanswered(answer) bool { return false }

// unansweredBy allows requests to the given processes to go unanswered.
func unansweredBy(procs ...*apiProc) func(answer) bool {
	return func(a answer) bool {
		for _, p := range procs {
			if a.target == p.Name {
				return true
			}
		}
		return false
	}
}
