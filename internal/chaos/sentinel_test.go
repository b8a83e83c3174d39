//go:build linux

package chaos_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestSentinelFailover: two API processes find their Redis through Redis Sentinel
// (REDIS_SENTINEL_ADDRS) while a dlock, a redis and a queue product are on sale. The replica
// is held back (its replication link stalled; the test checks that the sentinels leave it
// behind the proxy for longer than the test may run, and that it still is at the kill), the
// sale goes on, so the master takes writes the replica never gets (locks, fences, gate admissions, queued purchases); then the master
// is killed (SIGKILL) and the sentinels promote the replica. The processes follow the new
// master, and each sale finishes with every invariant (verify), except what the failover
// provably lost, which is counted and bounded by what the replica lacked at the kill:
//   - dlock: the lock and the last fences are gone; new fences, from the new master's clock,
//     still exceed every fence the old master minted (PostgreSQL's fence after the sale is
//     above the old master's fence key at the kill);
//   - redis: the gate counts fewer admissions than were made; it admits too many, PostgreSQL
//     refuses them, and the gate is synced from PostgreSQL, or, when PostgreSQL sells its last
//     unit first, by the batch that sold it: it agrees at the end;
//   - queue: the purchases queued and not yet written are gone (their buyers were answered
//     202 and have no order), and so is the record of those written: the counter sells their
//     units again, PostgreSQL refuses the surplus and it is dead-lettered as sold_out.
func TestSentinelFailover(t *testing.T) {
	log := faultTest(t)
	d := servers.StartSentinels(t, nil)
	holdOutlasts(t, d)
	b := onRedis(t, "127.0.0.1:1") // REDIS_ADDR, overridden by the sentinels: nothing listens there
	apis := b.startAPIs(t, 2, map[string]string{
		"REDIS_SENTINEL_ADDRS": strings.Join(d.Addrs(), ","), "REDIS_SENTINEL_MASTER": d.Name,
		"LOCK_TTL": "1s", "PURCHASE_TIMEOUT": "2s", "QUEUE_CLAIM_IDLE": "1s",
		"LOG_LEVEL": "info", // the gate's seedings are logged at info
	})
	locked := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 40, thinkMS: 100})
	gated := newSale(t, apis[0], b.dsn, product{strategy: "redis", stock: 60, thinkMS: 100})
	queued := newSale(t, apis[0], b.dsn, product{strategy: "queue", stock: 80, thinkMS: 300})
	sales := []*sale{locked, gated, queued}
	for _, s := range sales {
		s.start(4, apis...)
	}
	for _, s := range sales {
		s.waitBought(t, 8)
	}

	d.HoldBackReplica(t)
	stillHeldBack(t, d, "after the hold")
	log("replica held back; sold so far: dlock %d, redis %d, queue %d", locked.bought.Load(), gated.bought.Load(), queued.bought.Load())
	for _, s := range sales {
		s.waitBought(t, s.bought.Load()+4) // writes the replica never gets
	}
	master, replica := d.MasterClient(), d.ReplicaClient()
	ctx, lockKey := context.Background(), b.keys().Lock(locked.id)
	waitNewHolder(t, "a dlock holder the replica does not know", func() string { return master.Get(ctx, lockKey).Val() })
	// Writes are held from here to the kill, so that what the test reads now is what the
	// failover loses.
	if err := master.Do(ctx, "CLIENT", "PAUSE", 10_000, "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	loss := readLoss(t, b.keys(), master, replica, locked.id, gated.id, queued.id)
	stillHeldBack(t, d, "at the kill")
	d.Master.Stop()
	killed := time.Now()
	log("master killed; the replica lacks: the lock %v, fences %d..%d, %d gate units, %d queue admissions (%d of them not yet acknowledged)",
		loss.lockLost, loss.fenceKept, loss.fenceMinted, loss.gateUnits, len(loss.queueAdmitted), loss.queuedLost)
	if to := d.AwaitFailover(t, d.Master.Addr, 30*time.Second); to != d.Replica.Addr {
		t.Fatalf("the sentinels promoted %s, want the replica %s", to, d.Replica.Addr)
	}
	log("the sentinels report the replica as master, %v after the kill", time.Since(killed).Round(time.Millisecond))
	for _, s := range sales {
		s.waitBought(t, s.bought.Load()+3) // the sale goes on, on the new master
		log("%s: first sale after the kill %v after it", s.strategy, s.firstSaleSince(killed))
	}
	for _, s := range sales {
		s.finish(t, apis...)
	}
	log("all sold out")

	t.Run("dlock", func(t *testing.T) {
		if !loss.lockLost || loss.fenceKept >= loss.fenceMinted {
			t.Errorf("the replica had the lock (%v) or the last fence (%d, minted %d): the failover lost nothing",
				!loss.lockLost, loss.fenceKept, loss.fenceMinted)
		}
		locked.verify(t, apis[1], noneUnanswered)
		if after := locked.auditPG(t).Fence; after <= loss.fenceMinted {
			t.Errorf("fence after the failover %d <= %d, the last the old master minted: new holders could not write", after, loss.fenceMinted)
		}
		// A write refused by the fence check is a holder from before the failover, overtaken
		// (one batch a process at most), or a fence minted after it that fell back.
		stale := 0
		for _, l := range logLines(t, apis, "write refused: the product was written under a newer lock fence") {
			switch {
			case l.ProductID != locked.id:
			case l.Fence > loss.fenceMinted:
				t.Errorf("%s: a fence minted after the failover (%d) was refused below %d: fences went back", l.proc, l.Fence, l.ProductFence)
			default:
				stale++
				t.Logf("%s: a holder from before the failover fenced: fence %d < %d", l.proc, l.Fence, l.ProductFence)
			}
		}
		if stale > len(apis) {
			t.Errorf("%d writes refused under fences minted before the failover, more than one a process: fences minted after it fell back", stale)
		}
		logLockMetrics(t, apis)
	})
	t.Run("redis", func(t *testing.T) {
		if loss.gateUnits <= 0 {
			t.Errorf("the replica's gate lacks %d units: the failover lost nothing", loss.gateUnits)
		}
		gated.verify(t, apis[1], noneUnanswered) // the gate agrees with PostgreSQL again
		reconciled, synced := 0.0, 0
		for _, p := range apis {
			reconciled += p.Metric("seckill_gate_reconciled_total", "")
		}
		for _, l := range logLines(t, apis, "gate seeded from PostgreSQL") {
			if l.ProductID == gated.id && l.Mode == "sync" {
				synced++
			}
		}
		atLast := len(logLines(t, apis, "gate counts units PostgreSQL has sold; syncing it"))
		t.Logf("gate units the failover lost: %d; syncs from PostgreSQL: %d (%d when PostgreSQL sold its last unit); expired admissions reconciled: %v",
			loss.gateUnits, synced, atLast, reconciled)
	})
	t.Run("queue", func(t *testing.T) {
		queued.verifyQueueLoss(t, apis, apis[1], loss.queueAdmitted, replica, b.keys())
	})
}

// loss is what the held-back replica lacks of the master's data when the master is killed.
type loss struct {
	lockLost               bool  // the dlock product's lock key differs on the replica
	fenceKept, fenceMinted int64 // its fence key on the replica, and on the master
	gateUnits              int64 // units the redis product's gate on the master took that the replica's did not
	// queueAdmitted are the queue product's buyers the master admitted and the replica never
	// heard of: what the failover may lose. queuedLost of them were still in the stream.
	queueAdmitted map[int64]bool
	queuedLost    int64
}

// readLoss compares the master's and the replica's data of the three products.
func readLoss(t *testing.T, keys inventory.Keys, master, replica *redis.Client, lockID, gateID, queueID int64) loss {
	t.Helper()
	ctx := context.Background()
	var l loss
	l.lockLost = master.Get(ctx, keys.Lock(lockID)).Val() != replica.Get(ctx, keys.Lock(lockID)).Val()
	fence := dlock.FenceKey(keys.Lock(lockID))
	l.fenceMinted, _ = master.Get(ctx, fence).Int64()
	l.fenceKept, _ = replica.Get(ctx, fence).Int64()
	onMaster, _ := master.Get(ctx, keys.GateStock(gateID)).Int64()
	onReplica, _ := replica.Get(ctx, keys.GateStock(gateID)).Int64()
	l.gateUnits = onReplica - onMaster
	l.queueAdmitted = map[int64]bool{}
	have := map[string]bool{}
	for _, u := range replica.SMembers(ctx, keys.GateBuyers(queueID)).Val() {
		have[u] = true
	}
	for _, u := range master.SMembers(ctx, keys.GateBuyers(queueID)).Val() {
		if !have[u] {
			l.queueAdmitted[parseUser(t, u)] = true
		}
	}
	for _, e := range master.XRange(ctx, keys.QueueStream(queueID), "-", "+").Val() {
		if l.queueAdmitted[parseUser(t, e.Values["user"])] {
			l.queuedLost++
		}
	}
	return l
}

// firstSaleSince is how long after since the first purchase sent after it was answered 201
// or 202.
func (s *sale) firstSaleSince(since time.Time) time.Duration {
	first := time.Duration(-1)
	for _, a := range s.answersSnapshot() {
		if (a.status == 201 || a.status == 202) && a.sent.After(since) && (first < 0 || a.done.Sub(since) < first) {
			first = a.done.Sub(since)
		}
	}
	return first.Round(time.Millisecond)
}

// logLine is one JSON line of an API process's log, the fields the tests read.
type logLine struct {
	proc         string
	Msg          string `json:"msg"`
	ProductID    int64  `json:"product_id"`
	Fence        int64  `json:"fence"`
	ProductFence int64  `json:"product_fence"`
	Mode         string `json:"mode"`
}

// logLines returns the lines of apis' logs whose message is msg.
func logLines(t *testing.T, apis []*apiProc, msg string) []logLine {
	t.Helper()
	var lines []logLine
	for _, p := range apis {
		for _, text := range strings.Split(p.Log.String(), "\n") {
			l := logLine{proc: p.Name}
			if strings.Contains(text, msg) && json.Unmarshal([]byte(text), &l) == nil && l.Msg == msg {
				lines = append(lines, l)
			}
		}
	}
	return lines
}

// logLockMetrics logs what each process's lock observed.
func logLockMetrics(t *testing.T, apis []*apiProc) {
	for _, p := range apis {
		t.Logf("%s: locks lost %v, renewals failed %v, release errors %v", p.Name,
			p.Metric("seckill_lock_lost_total", ""), p.Metric("seckill_lock_renewals_total", `result="error"`),
			p.Metric("seckill_lock_release_errors_total", ""))
	}
}
