//go:build linux

package chaos_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/testenv/contract"
)

// retryBudget bounds how long one buyer's retry may keep meeting 503s (each retried after its
// Retry-After): an admission of a killed process stays pending in the redis strategy's gate
// for PURCHASE_TIMEOUT + 11 s before it can be settled.
const retryBudget = 30 * time.Second

// checkRetries has every buyer of the sale retry its purchase once through via, as docs/api.md
// tells a client that lost its answer (or got a 503) to do, and holds each retry's answer to
// PostgreSQL: 409 already_purchased naming the user's order exactly when the user has one,
// else 409 sold_out (the sale is over). A 503 is retried after its Retry-After, within
// retryBudget; anything else fails the test.
func (s *sale) checkRetries(t *testing.T, pg pgAudit, proc *apiProc) {
	t.Helper()
	// A client of its own, its connections closed at the end: an idle connection the server
	// has seen no request on yet counts as active for 5 s in its Shutdown (net/http), and the
	// test stops the process right after (SHUTDOWN_TIMEOUT 5s).
	tr := &http.Transport{MaxConnsPerHost: 16}
	defer tr.CloseIdleConnections()
	via := client.New(proc.Base, &client.Options{AdminToken: adminToken, HTTPClient: &http.Client{Transport: contract.Transport(t, tr)}})
	name := proc.Name
	var users []int64
	for _, a := range s.answersSnapshot() {
		users = append(users, a.user)
	}
	slices.Sort(users)
	users = slices.Compact(users)
	var (
		mu   sync.Mutex
		bad  []string
		wg   sync.WaitGroup
		next = make(chan int64)
	)
	for range 16 {
		wg.Go(func() {
			for u := range next {
				if msg := s.retry(via, name, u, pg.orders[u]); msg != "" {
					mu.Lock()
					bad = append(bad, msg)
					mu.Unlock()
				}
			}
		})
	}
	for _, u := range users {
		next <- u
	}
	close(next)
	wg.Wait()
	for i, msg := range bad {
		if i == 8 {
			t.Errorf("%s: ... %d untrue retries in all", s.strategy, len(bad))
			break
		}
		t.Errorf("%s: retry through %s: %s", s.strategy, name, msg)
	}
	t.Logf("%s: %d buyers retried through %s, %d answers untrue", s.strategy, len(users), name, len(bad))
}

// retry sends user's retry through via (the process named name) and returns what is untrue
// about its answer ("" if nothing), given the user's order id in PostgreSQL (0: none). It
// records each attempt's answer in s.retries.
func (s *sale) retry(via *client.Client, name string, user, orderID int64) string {
	ctx, cancel := context.WithTimeout(context.Background(), retryBudget)
	defer cancel()
	who := "user " + strconv.FormatInt(user, 10)
	for {
		a := answer{user: user, target: name, sent: time.Now()}
		o, err := via.Purchase(ctx, s.id, user)
		var p *api.Problem
		var accepted *client.AcceptedError
		switch {
		case err == nil:
			a.status, a.order = http.StatusCreated, o.ID
		case errors.As(err, &accepted):
			a.status = http.StatusAccepted
		case errors.As(err, &p):
			a.status, a.code, a.retryAfter, a.order = p.Status, p.Code, p.RetryAfter, p.OrderID
		default:
			a.err = err
		}
		a.done = time.Now()
		s.mu.Lock()
		s.retries = append(s.retries, a)
		s.mu.Unlock()
		switch {
		case err == nil:
			return who + " bought order " + strconv.FormatInt(o.ID, 10) + " on retry, after the sale sold out"
		case !errors.As(err, &p):
			return who + ": " + err.Error()
		case p.Status == http.StatusServiceUnavailable && (p.Code == api.CodeBusy || p.Code == api.CodeUnavailable):
			select { // nothing was written: retry, as a client does
			case <-ctx.Done():
				return who + ": still 503 " + p.Code + " after " + retryBudget.String()
			case <-time.After(time.Second):
				continue
			}
		case orderID != 0 && (p.Code != api.CodeAlreadyPurchased || p.OrderID != orderID):
			return who + " has order " + strconv.FormatInt(orderID, 10) + " but was answered " +
				strconv.Itoa(p.Status) + " " + p.Code + " order " + strconv.FormatInt(p.OrderID, 10)
		case orderID == 0 && p.Code != api.CodeSoldOut:
			return who + " has no order but was answered " + strconv.Itoa(p.Status) + " " + p.Code
		}
		return ""
	}
}
