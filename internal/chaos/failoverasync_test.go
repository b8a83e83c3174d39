//go:build linux

package chaos_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestPostgresAsyncFailoverLosesOrders is the negative control of the failover tests: the
// same kill on a cluster with asynchronous replication (synchronous_mode off), where COMMIT
// returns before the standby has the transaction. The primary's WAL senders are paused while
// buyers are answered 201, then the primary is killed and its standby promoted without
// those orders. The test must see each of them: a buyer answered 201 whose order the new
// primary does not have (what verify's check of the answers fails on), and a history the
// checker rejects as illegal. Without a loss to see, it fails: the failover tests' checks
// would then prove nothing.
func TestPostgresAsyncFailoverLosesOrders(t *testing.T) {
	log := faultTest(t)
	c, b, _ := onPatroni(t, servers.PatroniOptions{Async: true})
	apis := b.startAPIs(t, 2, failoverEnv)
	s := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 400, thinkMS: 5})
	s.start(3, apis...)
	s.waitBought(t, 10)
	old := c.Primary()

	old.PauseWALSenders()
	s.waitBought(t, s.bought.Load()+5) // answered 201 while the standby received nothing
	old.Kill()
	log("%s killed, its WAL senders paused while %d units sold", old.Name, 5)
	c.WaitPrimary(60*time.Second, old)
	s.finish(t, apis...)
	pg := s.auditPG(t)
	var lost []int64
	for _, a := range s.answersSnapshot() {
		if a.status == http.StatusCreated && !pg.buyers[a.user] {
			lost = append(lost, a.user)
		}
	}
	log("%d buyers answered 201 have no order on the new primary: %v; PostgreSQL: %s", len(lost), lost, pg)
	if len(lost) == 0 {
		t.Fatal("no acknowledged order lost with asynchronous replication: the failover tests cannot see a loss")
	}
	s.mustReject(t, s.purchases(everyAnswer), pg, "-async")
}
