//go:build linux

package chaos_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/history"
)

// historyTimeout bounds one sale's history check. A legal history of 20000 purchases checks
// in well under a second; the search of an illegal one may not end.
const historyTimeout = time.Minute

// purchases is the sale's history: every answer of the sale, and of checkRetries' retries,
// but those keep rejects.
func (s *sale) purchases(keep func(answer) bool) []history.Purchase {
	s.mu.Lock()
	answers := append(slices.Clone(s.answers), s.retries...)
	s.mu.Unlock()
	var ops []history.Purchase
	for _, a := range answers {
		if !keep(a) {
			continue
		}
		op := history.Purchase{
			Product: s.id, User: a.user, Invoke: a.sent, Outcome: history.PurchaseOutcome(a.status, a.code),
			Status: a.status, Code: a.code, Order: a.order, Process: a.target,
		}
		if a.status != 0 {
			op.Complete = a.done
		}
		ops = append(ops, op)
	}
	return ops
}

// checkHistory checks the sale's history of purchases (internal/history): some order of
// them, each placed between its request and its answer, explains every answer, against
// the stock before the sale, with PostgreSQL's orders (pg, read once the sale settled) to
// resolve the answers that did not tell. On failure it logs where porcupine's page of the
// history is: in $SERVERS_LOGDIR, named for the test, when it is set; else in a directory
// under the system's temp dir, which stays.
func (s *sale) checkHistory(t *testing.T, pg pgAudit) {
	t.Helper()
	sale := saleOf(s, pg)
	ops := s.purchases(everyAnswer)
	res, err := checkPurchases(t, ops, sale, "")
	switch {
	case err != nil:
		t.Errorf("%s: history check: %v", s.strategy, err)
	case !res.OK():
		t.Errorf("%s: the history of %d purchases is %s", s.strategy, len(ops), res.Verdict)
		for _, r := range res.Reasons {
			t.Errorf("%s: %s", s.strategy, r)
		}
		t.Errorf("%s: porcupine's page of the history: %s", s.strategy, res.Visualization)
	}
	t.Logf("%s: history %s", s.strategy, res)
}

// checkPurchases runs the checker on ops and moves its page, if any, to $SERVERS_LOGDIR under the
// test's name with suffix. Without $SERVERS_LOGDIR the page of the main check (suffix "")
// stays where the checker wrote it, the others are removed with the test.
func checkPurchases(t *testing.T, ops []history.Purchase, sale history.Sale, suffix string) (history.Result, error) {
	dir := os.Getenv("SERVERS_LOGDIR")
	if dir == "" && suffix != "" {
		dir = t.TempDir()
	}
	res, err := history.CheckPurchases(ops, sale, historyTimeout, dir)
	if res.Visualization != "" && os.Getenv("SERVERS_LOGDIR") != "" {
		named := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+"-purchases"+suffix+".html")
		if os.Rename(res.Visualization, named) == nil {
			res.Visualization = named
		}
	}
	return res, err
}
