//go:build linux

package chaos_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/inventory"
)

// verifyQueueLoss is verify for a queue product whose Redis lost writes in a failover:
// admitted are the buyers the old master admitted and the new one (rdb) never heard of.
//   - Every buyer answered 202 who has no order once the stream is drained is one of them (its
//     purchase vanished with the old master), or was dead-lettered as sold_out by the new
//     master's consumers (admitted by a counter that did not know the units the lost buyers
//     had taken and PostgreSQL had written); no more than len(admitted) in all, and no more
//     dead letters than lost buyers who were written. Their lookups answer 404.
//   - Every other answer, and every buyer's retry, matches PostgreSQL (checkAnswers with those
//     buyers as lostOK, checkRetries), PostgreSQL is consistent and sold out, and the history,
//     the lost 202s read as purchases that did nothing, is linearizable (checkHistory).
//   - The service's audit says consistent for PostgreSQL, and its view of Redis is off by
//     exactly the loss: the dead letters, and the written buyers the new master never had,
//     unless a process of apis verified the gate in the new data set (it does when the gate
//     sells out there: docs/strategies.md#forgotten-buyers), which counts those buyers again.
func (s *sale) verifyQueueLoss(t *testing.T, apis []*apiProc, via *apiProc, admitted map[int64]bool, rdb *redis.Client, keys inventory.Keys) {
	t.Helper()
	if len(admitted) == 0 {
		t.Errorf("%s: the replica had every admission: the failover lost nothing", s.strategy)
	}
	c := apiClient(t, via)
	s.drain(t, c)
	pg := s.auditPG(t)
	t.Logf("%s: answers %s; PostgreSQL: %s", s.strategy, s.summary(), pg)
	if !pg.Consistent || pg.Stock != 0 {
		t.Errorf("%s: PostgreSQL audit inconsistent or not sold out: %s", s.strategy, pg)
	}
	dead := deadLettered(t, rdb, keys, s.id)
	written := 0
	for u := range admitted {
		if pg.buyers[u] {
			written++
		}
	}
	lost := s.lostAccepted(t)
	vanished := 0
	s.lostOK = map[int64]bool{}
	for _, u := range lost {
		switch {
		case admitted[u]:
			vanished++
		case dead[u] != "sold_out":
			t.Errorf("user %d was answered 202 and has no order, but the failover did not lose it and it is not dead-lettered as sold_out (%q)", u, dead[u])
		}
		if found, err := s.lookUpOrder(c, u); err != nil || found {
			t.Errorf("user %d: lost, but the order lookup says found=%v (%v)", u, found, err)
		}
		s.lostOK[u] = true
	}
	t.Logf("%s: the failover lost the record of %d admissions: %d written before the kill, %d answered 202 and never written; "+
		"%d more dead-lettered as sold_out (%d of them answered 202): %d buyers answered 202 without an order",
		s.strategy, len(admitted), written, vanished, len(dead), len(lost)-vanished, len(lost))
	if len(lost) > len(admitted) || len(dead) > written {
		t.Errorf("%d buyers answered 202 without an order (bound: %d admissions lost), %d dead letters (bound: %d written)",
			len(lost), len(admitted), len(dead), written)
	}
	s.checkAnswers(t, pg, c, noneUnanswered)
	s.checkRetries(t, pg, via)
	// A 202 is a purchase that may or may not be written: a lost one did nothing, and the rest
	// of the sale, retries included, must still be linearizable.
	s.checkHistory(t, pg)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err := c.Audit(ctx, s.id)
	if err != nil {
		t.Fatalf("the API's audit: %v", err)
	}
	if a.Orders != a.Sold || a.Oversold != 0 || a.DuplicateUsers != 0 || a.Queue == nil {
		t.Fatalf("the API's audit of PostgreSQL: %+v", a)
	}
	q := a.Queue
	t.Logf("%s: the service's audit: agrees %v, Redis stock %d, buyers %d, queued %d, dead %d; PostgreSQL orders %d",
		s.strategy, q.Agrees, q.Stock, q.Buyers, q.Queued, q.Dead, a.Orders)
	forgotten := written // buyers written whom the new master's buyers set lacks
	for _, l := range logLines(t, apis, "gate verified in a new Redis data set") {
		if l.ProductID == s.id {
			t.Logf("%s: %s verified the gate in the new data set, counting the buyers with orders again", s.strategy, l.proc)
			forgotten = 0
		}
	}
	if q.Dead != int64(len(dead)) || q.Buyers != int64(a.Orders-forgotten) || q.Agrees != (len(dead) == 0 && forgotten == 0) {
		t.Errorf("%s: the service's audit is off by more than the loss: dead %d (want %d), buyers %d (want %d orders less %d forgotten)",
			s.strategy, q.Dead, len(dead), q.Buyers, a.Orders, forgotten)
	}
}

// deadLettered reads product id's dead-letter stream on rdb: user -> reason.
func deadLettered(t *testing.T, rdb *redis.Client, keys inventory.Keys, id int64) map[int64]string {
	t.Helper()
	entries, err := rdb.XRange(context.Background(), keys.QueueDead(id), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	dead := map[int64]string{}
	for _, e := range entries {
		dead[parseUser(t, e.Values["user"])] = fmt.Sprint(e.Values["reason"])
	}
	return dead
}

// parseUser reads a user id as Redis holds it.
func parseUser(t *testing.T, v any) int64 {
	t.Helper()
	u, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	if err != nil {
		t.Fatalf("user %v: %v", v, err)
	}
	return u
}
