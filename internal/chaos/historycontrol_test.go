//go:build linux

package chaos_test

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/history"
)

// TestHistoryCatchesNaive holds the history checker to real sales over HTTP, the way the
// fault tests use it (checkHistory), with the two negative controls it must reject:
//   - naive: 16 buyers at once on 5 units of a naive product (read, think 50 ms, write
//     back): it oversells, and its history has no legal order;
//   - a dlock sale, whose history is linearizable, with one sold_out answer forged at its
//     very start, when the stock could not be 0 yet: no legal order either.
//
// Each failed check writes porcupine's page, as a fault test's would; the test reads it.
func TestHistoryCatchesNaive(t *testing.T) {
	log := faultTest(t)
	b, _ := sharedBackend(t)
	apis := b.startAPIs(t, 2, nil)

	naive := newSale(t, apis[0], b.dsn, product{strategy: "naive", stock: 5, thinkMS: 50})
	naive.start(16, apis...).wg.Wait() // until a buyer is told sold_out
	pg := naive.auditPG(t)
	log("naive: answers %s; PostgreSQL: %s", naive.summary(), pg)
	if pg.Oversold == 0 {
		t.Fatalf("naive did not oversell: the control proves nothing")
	}
	res := naive.mustReject(t, naive.purchases(everyAnswer), pg, "-naive")
	log("naive: %s; porcupine's search alone: %s", res, res.Search)

	safe := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 10})
	safe.start(8, apis...).wg.Wait()
	safe.finish(t, apis...)
	pg = safe.auditPG(t)
	ops := safe.purchases(everyAnswer)
	res, err := checkPurchases(t, ops, saleOf(safe, pg), "-dlock")
	if err != nil || !res.OK() {
		t.Fatalf("dlock: the history of a sale with no fault: %s, %v; want linearizable", res, err)
	}
	log("dlock: %s", res)
	first := ops[0].Invoke
	for _, op := range ops {
		if op.Invoke.Before(first) {
			first = op.Invoke
		}
	}
	forged := history.Purchase{Product: safe.id, User: maxUsers + 1, Invoke: first, Complete: first.Add(time.Microsecond),
		Outcome: history.Fail, Status: 409, Code: api.CodeSoldOut, Process: "forged"}
	res = safe.mustReject(t, append(ops, forged), pg, "-forged")
	log("dlock with a sold_out forged at its start: %s; porcupine's search alone: %s", res, res.Search)
}

// everyAnswer keeps every answer in a history.
func everyAnswer(answer) bool { return true }

// saleOf is what the history checker knows of s besides its history: its stock before the
// sale, and its orders in pg.
func saleOf(s *sale, pg pgAudit) history.Sale {
	s.mu.Lock()
	restocks := slices.Clone(s.restocks)
	s.mu.Unlock()
	stock := int(pg.InitialStock) // restocks included (docs/api.md#merchants-controls)
	for _, r := range restocks {
		stock -= r.Units
	}
	return history.Sale{
		Stock:    map[int64]int{s.id: stock},
		Orders:   map[int64]map[int64]int64{s.id: pg.orders},
		Restocks: restocks,
	}
}

// mustReject checks ops, expecting the checker to find them illegal and write its page.
func (s *sale) mustReject(t *testing.T, ops []history.Purchase, pg pgAudit, suffix string) history.Result {
	t.Helper()
	res, err := checkPurchases(t, ops, saleOf(s, pg), suffix)
	if err != nil || res.Verdict != history.Illegal {
		t.Fatalf("%s: the checker says %s (%v), want illegal", s.strategy, res, err)
	}
	page, err := os.ReadFile(res.Visualization)
	if err != nil || !strings.Contains(string(page), "<html") {
		t.Fatalf("%s: porcupine's page %q: %v (%d bytes)", s.strategy, res.Visualization, err, len(page))
	}
	for _, r := range res.Reasons {
		t.Logf("%s:   %s", s.strategy, r)
	}
	return res
}
