//go:build linux

package chaos_test

import (
	"bytes"
	"syscall"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/faultproxy"
)

// TestEtcdLateWriteIsFenced: the fence itself, seen firing. An API process whose product
// locks live in etcd takes a product's lock and sends its batch (BEGIN, the row locked FOR
// UPDATE, the sell under its fence, pipelined) to PostgreSQL; the network holds it back (a
// proxy of the test's, on this process's connections only) and the process is frozen
// (SIGSTOP) waiting for the answer, past its lease. etcd expires the lease; the other
// process takes the lock under a newer fence and sells. Then the held batch arrives and runs,
// in a transaction of the frozen process, after the newer fence was committed: PostgreSQL
// answers its sell with the row that sell.sql returns when the fence condition held no row
// (kind 's', stock NULL) and no order row. On SIGCONT the buyer is answered 503 busy and has
// no order, the product row is as the newer holder left it, and the sale audits consistent.
// The control: a batch held and let go in the same way under a valid lock is answered with
// its order row, so the test would see a late write that sold.
func TestEtcdLateWriteIsFenced(t *testing.T) {
	log := faultTest(t)
	b, _ := sharedBackend(t)
	px, dsn := b.proxyPostgres(t)
	frozen, other, s, lock := b.startEtcdPair(t, "held", dsn, 0)
	apis := []*apiProc{frozen, other}
	s.start(2, apis...)
	s.waitBought(t, 4)
	s.stopAll()

	// The control: a batch held back a moment, under a lock still held, sells.
	h := px.HoldNext(batch)
	g := s.start(1, frozen)
	h.Await(t, 10*time.Second)
	h.Release()
	g.stop()
	if sold, fenced := sellAnswer(t, h); !sold || fenced {
		t.Fatalf("control: PostgreSQL's answer to a batch under a valid lock: order row %v, fenced row %v; want an order", sold, fenced)
	}
	log("control: a batch held back and let go under a valid lock was answered with its order")

	h = px.HoldNext(batch)
	g = s.start(1, frozen)
	h.Await(t, 10*time.Second)
	fence := lock.fence(t)
	if fence == 0 {
		t.Fatalf("no one holds the lock while %s's batch is held back: want it held", frozen.Name)
	}
	stopped, victim := s.freeze(t, frozen)
	log("%s frozen (SIGSTOP) holding the lock with fence %d, its batch for buyer %d held back", frozen.Name, fence, victim)
	lock.waitExpired(t, log, fence, stopped)
	s.sellsNewer(t, other).stop() // the late transaction will hold the row until the frozen process resumes
	before := s.auditPG(t)
	if before.Fence <= fence {
		t.Fatalf("fence on the row %d, want more than the frozen holder's %d", before.Fence, fence)
	}
	h.Release()
	sold, fenced := sellAnswer(t, h)
	log("the late batch ran in PostgreSQL with fence %d, the row's %d: answered with an order row %v, the fenced row %v",
		fence, before.Fence, sold, fenced)
	if sold || !fenced {
		t.Errorf("PostgreSQL's answer to the late sell: order row %v, fenced row %v; want the fenced row only", sold, fenced)
	}
	time.Sleep(time.Until(stopped.Add(5 * time.Second))) // the fault: frozen 5s in all
	// Its one request in flight is the victim's: no new one may sell after SIGCONT.
	g.halt()
	frozen.Signal(syscall.SIGCONT)
	g.stop()

	a := s.lateBuyerBusy(t, victim)
	after := s.auditPG(t)
	if after.Fence != before.Fence || after.Stock != before.Stock {
		t.Errorf("the late write landed: before %s; after %s", before, after)
	}
	log("%s after SIGCONT: buyer answered %s, no order, product row unchanged (fence %d, stock %d); seckill_lock_lost_total %v",
		frozen.Name, a.outcome(), after.Fence, after.Stock, frozen.Metric("seckill_lock_lost_total", ""))

	s.finish(t, apis...)
	s.verify(t, other, noneUnanswered)
}

// The rows of a sell statement's answer (sell.sql), as they appear in PostgreSQL's DataRow
// messages whatever the format: sellColumns columns, the first a one-byte kind; an 's' row
// with its other columns all NULL (-1 lengths) says nothing was written for a newer fence.
// sellColumns is the width of sell.sql's rows: kind, user_id, id, created_at, status, pay_by,
// paid_at, stock, ord.
const sellColumns = 9

var (
	orderRow  = []byte{0, sellColumns, 0, 0, 0, 1, 'o'} // an order written
	sellRow   = []byte{0, sellColumns, 0, 0, 0, 1, 's'} // every answer has one
	fencedRow = append([]byte{0, sellColumns, 0, 0, 0, 1, 's'}, bytes.Repeat([]byte{0xff}, 4*(sellColumns-1))...)
)

// batch matches a chunk that begins with a message of the extended query protocol (Parse or
// Bind): pgx pipelines a batch's statements that way, while the ping of a connection taken
// from the pool is a simple Query.
func batch(chunk []byte) bool { return chunk[0] == 'P' || chunk[0] == 'B' }

// sellAnswer waits for PostgreSQL's answer to the held batch and reports whether it holds an
// order row, and whether its 's' row says nothing was written because of a newer fence.
func sellAnswer(t *testing.T, h *faultproxy.Hold) (sold, fenced bool) {
	t.Helper()
	var answer []byte
	testenv.Eventually(t, 10*time.Second, "PostgreSQL's answer to the held batch", func() bool {
		answer = h.Answer()
		return bytes.Contains(answer, sellRow)
	})
	return bytes.Contains(answer, orderRow), bytes.Contains(answer, fencedRow)
}
