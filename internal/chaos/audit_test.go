//go:build linux

package chaos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/audit"
)

// pgAudit is the sale as PostgreSQL records it (package audit), with its buyers and their
// orders.
type pgAudit struct {
	audit.Sale
	buyers map[int64]bool
	orders map[int64]int64 // user -> order id
}

// auditPG audits the sale in PostgreSQL, directly.
func (s *sale) auditPG(t *testing.T) pgAudit {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	figures, err := s.audit.Sale(ctx, s.id, false)
	if err != nil {
		t.Fatal(err)
	}
	orders, err := s.audit.Orders(ctx, s.id)
	if err != nil {
		t.Fatal(err)
	}
	buyers := make(map[int64]bool, len(orders))
	for u := range orders {
		buyers[u] = true
	}
	return pgAudit{Sale: figures, buyers: buyers, orders: orders}
}

func (a pgAudit) String() string {
	return fmt.Sprintf("initial %d, stock %d, orders %d, oversold %d, users with more than one order %d, fence %d",
		a.InitialStock, a.Stock, a.Orders, a.Oversold, a.DuplicateUsers, a.Fence)
}

// verify asserts what every fault test promises, once the sale is over:
//   - PostgreSQL (internal/audit): consistent (orders == initial_stock - stock, stock >= 0,
//     nothing oversold, no user with two orders), and stock == 0 (sold out);
//   - every buyer answered 201 has an order, and every order belongs to a buyer answered
//     201 or not answered at all (noAnswerOK says which requests may go unanswered: those
//     to a process the test killed, or cut off): no error answer hides a sale;
//   - no 5xx but 503 busy / unavailable / outcome_unknown with Retry-After, and no other
//     unexpected answer; an outcome_unknown (the process could not ask PostgreSQL what became
//     of its COMMIT) is resolved the way docs/api.md tells clients to, with GET
//     /api/v1/products/{id}/orders/{user_id} through via, which must agree with PostgreSQL;
//   - every buyer then retries once through via, as a client that lost its answer does, and
//     each retry's answer agrees with PostgreSQL: already_purchased naming the user's order
//     exactly when it has one, else sold_out (checkRetries);
//   - the API's own audit (through via) says consistent, and for the redis strategy that
//     the gate agrees with PostgreSQL;
//   - the history of every purchase, retries included, is linearizable against the stock
//     (checkHistory): some order of the purchases, each between its request and its answer,
//     explains every answer.
func (s *sale) verify(t *testing.T, via *apiProc, noAnswerOK func(answer) bool) {
	t.Helper()
	if s.strategy == "queue" {
		s.drain(t, apiClient(t, via))
	}
	pg := s.auditPG(t)
	t.Logf("%s: answers %s; PostgreSQL: %s", s.strategy, s.summary(), pg)
	if !pg.Consistent {
		t.Errorf("%s: PostgreSQL audit inconsistent: %s", s.strategy, pg)
	}
	if pg.Stock != 0 {
		t.Errorf("%s: not sold out: %s", s.strategy, pg)
	}
	s.checkLockHistory(t) // the product lock's grants, writes, losses and releases: a fenced mutex
	c := apiClient(t, via)
	s.checkAnswers(t, pg, c, noAnswerOK)
	s.checkRetries(t, pg, via)
	s.checkAPIAudit(t, c, via.Name)
	s.checkHistory(t, pg)
}

func (s *sale) checkAnswers(t *testing.T, pg pgAudit, via *client.Client, noAnswerOK func(answer) bool) {
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
			if s.startsAt != nil && a.done.Before(*s.startsAt) {
				fail("user %d was answered 201 by %s at %s, before the sale's start", a.user, a.target, a.done.Format(time.StampMicro))
			}
			continue
		case a.status == http.StatusAccepted: // queued: written by now (the sale is sold out)
			if !pg.buyers[a.user] && !s.lostOK[a.user] {
				fail("user %d was answered 202 by %s but has no order once the queue drained", a.user, a.target)
			}
			continue
		case a.status == 0:
			if !noAnswerOK(a) {
				fail("user %d got no answer from %s: %v", a.user, a.target, a.err)
			}
			continue
		case a.status == http.StatusServiceUnavailable && a.code == api.CodeOutcomeUnknown:
			t.Logf("%s: user %d answered outcome_unknown by %s; resolving it", s.strategy, a.user, a.target)
			if a.retryAfter == "" {
				fail("user %d: %s answered 503 outcome_unknown without Retry-After", a.user, a.target)
			}
			if found, err := s.lookUpOrder(via, a.user); err != nil || found != pg.buyers[a.user] {
				fail("user %d: the order lookup found an order: %v (%v), PostgreSQL has one: %v", a.user, found, err, pg.buyers[a.user])
			}
			continue
		case a.status >= 500 && (a.status != http.StatusServiceUnavailable || a.code != api.CodeBusy && a.code != api.CodeUnavailable):
			fail("user %d: %s answered %s: a 5xx other than 503 busy/unavailable/outcome_unknown", a.user, a.target, a.outcome())
		case a.status == http.StatusServiceUnavailable && a.retryAfter == "":
			fail("user %d: %s answered 503 %s without Retry-After", a.user, a.target, a.code)
		case a.code == api.CodeSaleNotStarted && s.startsAt != nil:
			// The API processes share this host's clock: a request sent after the start
			// reaches a process whose clock is past it too.
			if a.sent.After(*s.startsAt) {
				fail("user %d was answered sale_not_started by %s for a request sent at %s, after the start", a.user, a.target, a.sent.Format(time.StampMicro))
			}
		case a.status < 500 && !s.refusals[a.code] && (a.status != http.StatusConflict || a.code != api.CodeSoldOut):
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

// lookUpOrder asks via whether user has an order, the way the README tells a client to
// resolve outcome_unknown: 200 and the order, or 404 order_not_found. Any other answer is
// an error.
func (s *sale) lookUpOrder(via *client.Client, user int64) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o, err := via.OrderOf(ctx, s.id, user)
	var p *api.Problem
	switch {
	case err == nil && o.ProductID == s.id && o.UserID == user:
		return true, nil
	case err == nil:
		return false, fmt.Errorf("the lookup of user %d answered %+v", user, o)
	case errors.As(err, &p) && p.Status == http.StatusNotFound && p.Code == api.CodeOrderNotFound:
		return false, nil
	}
	return false, err
}

// drain waits (20 s at most) until the queue product's stream holds no purchase: every one
// admitted is written, or dead-lettered.
func (s *sale) drain(t *testing.T, via *client.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := via.AwaitDrained(ctx, s.id, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
}

// checkAPIAudit asserts that the API's audit, asked through via (the process named name),
// says consistent, and for the redis strategy that the gate agrees with PostgreSQL.
func (s *sale) checkAPIAudit(t *testing.T, via *client.Client, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := via.Audit(ctx, s.id)
	if err != nil {
		t.Errorf("%s: the API's audit through %s: %v", s.strategy, name, err)
		return
	}
	body, _ := json.Marshal(a)
	if !a.Consistent {
		t.Errorf("%s: the API's audit is not consistent: %s", s.strategy, body)
	}
	if s.strategy == "redis" && (a.Redis == nil || !a.Redis.Agrees) {
		t.Errorf("%s: the Redis gate and PostgreSQL disagree: %s", s.strategy, body)
	}
	if s.strategy == "queue" && (a.Queue == nil || !a.Queue.Agrees) {
		t.Errorf("%s: Redis's side of the queue and PostgreSQL disagree: %s", s.strategy, body)
	}
}

// finishAll sells out each of sales through apis (see finish), then verifies each in a
// subtest named for its strategy, through apis[1], with every request answered.
func finishAll(t *testing.T, log func(string, ...any), sales []*sale, apis []*apiProc) {
	t.Helper()
	for _, s := range sales {
		s.finish(t, apis...)
	}
	log("sold out")
	for _, s := range sales {
		t.Run(s.strategy, func(t *testing.T) { s.verify(t, apis[1], noneUnanswered) })
	}
}

// noErrorsLogged fails the test for each of apis that logged at ERROR (each a 500 or worse),
// and logs how many 'dependency unavailable' warnings (the 503s) each logged.
func noErrorsLogged(t *testing.T, apis ...*apiProc) {
	t.Helper()
	for _, p := range apis {
		if lines := p.ErrorLines(); len(lines) > 0 {
			t.Errorf("%s logged %d errors (each a 500 or worse), first: %s", p.Name, len(lines), lines[0])
		}
		t.Logf("%s logged %d 'dependency unavailable' warnings (the 503s)", p.Name,
			strings.Count(p.Log.String(), `"msg":"dependency unavailable"`))
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
