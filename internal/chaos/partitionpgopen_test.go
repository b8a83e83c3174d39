//go:build linux

package chaos_test

import (
	"net/http"
	"testing"
	"time"
)

// TestSilentPartitionFromPostgresOpenTransaction: as TestSilentPartitionFromPostgres, but
// the process is cut off from PostgreSQL once its pipelined batch (BEGIN, the product row
// locked FOR UPDATE, the sell) has gone out, before its COMMIT: the batch runs, PostgreSQL
// holds the product's row lock and the batch's orders in an open transaction, and waits for
// a COMMIT that never comes. The cut-off process gives up at the purchase's deadline (503,
// nothing written) and releases the product's lock; the others take it and must sell again
// while the partition lasts, not wait behind the abandoned transaction's row lock until the
// network heals (or, if the cut-off host is gone for good, until PostgreSQL's TCP keepalive
// finds out, two hours by default).
func TestSilentPartitionFromPostgresOpenTransaction(t *testing.T) {
	log := faultTest(t)
	b, _ := sharedBackend(t)
	px, dsn := b.proxyPostgres(t)
	env := map[string]string{"LOCK_TTL": "500ms", "LOCK_WAIT": "1s", "PURCHASE_TIMEOUT": "2s"}
	cut := b.startInNetns(t, "cut", dsn, env)
	apis := b.startAPIs(t, 2, env)
	all := []*apiProc{apis[0], apis[1], cut.apiProc}
	s := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 600, thinkMS: 20})
	s.start(1, apis...)
	s.launchWith(2, false, patient, []*apiProc{cut.apiProc})
	s.waitBought(t, 2)
	s.sellsAgain(t, cut.apiProc, time.Time{})

	onset := cutAt(t, px, cut, sellBatch)
	log("%s cut off from PostgreSQL (%s) after its batch went out, before its COMMIT", cut.Name, cut.pg)
	stalled := s.othersSellAgain(t, cut.Name, onset, pgPartitionFor)
	cut.ns.Heal()
	healed := time.Now()
	s.awaitAnswered(t, cut.Name)
	log("  dlock: %s answered %s; the others sold %d meanwhile, the first %v after the onset",
		cut.Name, s.answersOf(cut.Name, onset, healed), s.soldBy(cut.Name, onset, healed), stalled.Round(time.Millisecond))
	if stalled > partitionStallBound {
		t.Errorf("the others sold nothing for %v after %s was cut off with a transaction open: want at most %v",
			stalled.Round(time.Millisecond), cut.Name, partitionStallBound)
	}
	log("  dlock: %s sells again %v after healing", cut.Name, s.sellsAgain(t, cut.apiProc, healed).Round(time.Millisecond))
	finishAll(t, log, []*sale{s}, all)
	noErrorsLogged(t, all...)
}

// partitionStallBound is how long the others may sell nothing after a process was cut off from
// PostgreSQL with a transaction open: PostgreSQL ends a transaction idle for longer than a
// purchase's deadline (PURCHASE_TIMEOUT 2s) and a second (the service's
// idle_in_transaction_session_timeout, order.IdleInTransactionTimeout), with room for the
// next holder to sell on a loaded machine. The partition lasts longer (pgPartitionFor).
const partitionStallBound = 9 * time.Second

// othersSellAgain waits, up to within, for a process other than target to sell a unit of s
// from a purchase sent after since (sold then, not before the fault), and returns how long
// after since the first one was answered (within, if none was).
func (s *sale) othersSellAgain(t *testing.T, target string, since time.Time, within time.Duration) time.Duration {
	t.Helper()
	deadline := since.Add(within)
	for time.Now().Before(deadline) {
		for _, a := range s.answersSnapshot() {
			if a.target != target && !a.sent.Before(since) && a.status == http.StatusCreated {
				time.Sleep(time.Until(deadline)) // the fault lasts its time all the same
				return a.done.Sub(since)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return within
}

// sellBatch matches a chunk holding a pipelined purchase batch (runPipelinedTx): BEGIN, the
// product row locked, the planner setting, the sell: four statements or more executed in one
// write. A statement alone, or a COMMIT, is not one.
func sellBatch(chunk []byte) bool {
	executes := 0
	for typ := range pgMessages(chunk) {
		if typ == 'E' {
			executes++
		}
	}
	return executes >= 4
}
