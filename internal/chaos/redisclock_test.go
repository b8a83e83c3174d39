//go:build linux

package chaos_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// clockStep is how far these tests step the Redis host's clock: several seconds, past every
// lease (LOCK_TTL 500ms), a fair waiter's place (1 s) and QUEUE_CLAIM_IDLE (2s here).
const clockStep = 5 * time.Second

// stepStallBound is how soon after a step each sale must sell again: 1.0-1.7 s in the runs of
// TestRedisClockSteps; 10.2 s with fences minted from the clock alone, without the last fence
// + 1 carrying them across a step back (PostgreSQL refused every write until the clock caught
// up with the fence it held).
const stepStallBound = 5 * time.Second

// ownRedisFakeClock starts a redis-server of the test's own whose wall clock the test steps
// (servers.StartRedisFakeClock) and returns a backend on it.
func ownRedisFakeClock(t *testing.T, args ...string) (backend, *servers.Redis, *servers.RedisClock) {
	t.Helper()
	red, clock := servers.StartRedisFakeClock(t, args...)
	return onRedis(t, red.Addr), red, clock
}

// TestRedisClockSteps: the Redis host's clock steps forward 5 s mid-sale, then back 10 s (5 s
// behind the real clock), then forward 5 s again, while a dlock, a fair dlock, a redis and a
// queue product sell over two API processes. Redis expires keys by that clock, and the
// scripts read it: a step forward ends every lease at once (the holders' watchdogs find
// their keys gone and their batches answer 503 busy, nothing written) and every fair place,
// and makes the queue's batches in progress look idle, so the other process claims and
// writes them again (one order each: the unique key); a step back lengthens them. Fences are
// minted from the clock, or the last fence + 1 when the clock is behind it: PostgreSQL's
// fence goes up across every step, and the sale never stalls. Each sale sells out with every
// invariant. A holder's batch may still commit after the step gave the lock to another
// process, before its watchdog found the key gone (its fence was still the newest written):
// the dlock sales' lock histories may then be illegal, two holders, and their writes must be
// in fence order instead (allowTwoHolders).
func TestRedisClockSteps(t *testing.T) {
	log := faultTest(t)
	b, red, clock := ownRedisFakeClock(t)
	apis := b.startAPIs(t, 2, map[string]string{"LOCK_TTL": "500ms", "LOCK_WAIT": "2s", "QUEUE_CLAIM_IDLE": "2s"})
	sales := []*sale{
		newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 120, thinkMS: 100}),
		newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 100, thinkMS: 100, fair: true}),
		newSale(t, apis[0], b.dsn, product{strategy: "redis", stock: 200, thinkMS: 100}),
		newSale(t, apis[0], b.dsn, product{strategy: "queue", stock: 150, thinkMS: 200}),
	}
	names := []string{"dlock", "dlock fair", "redis", "queue"}
	fenced := sales[:2]
	for _, s := range fenced { // a step forward expires a held key at once: see allowTwoHolders
		s.allowTwoHolders("a step forward of Redis's clock ends the holder's lease at once, and its batch may still commit")
	}
	for _, s := range sales {
		s.start(3, apis...)
	}
	for _, s := range sales {
		s.waitBought(t, 8)
	}
	fences := fencesOf(t, fenced)
	redelivered := watchRedeliveries(t, red.Client(), b.keys().QueueStream(sales[3].id))
	for _, step := range []time.Duration{clockStep, -2 * clockStep, clockStep} {
		lost := lostLocks(apis)
		stepped := clock.Step(t, step)
		for i, s := range sales {
			s.waitBought(t, s.bought.Load()+4)
			took := time.Since(stepped)
			log("clock stepped %+v (offset %v): %s sells again %v after the step", step, clock.Offset(), names[i],
				took.Round(time.Millisecond))
			if took > stepStallBound {
				t.Errorf("%s stalled: 4 more units sold only %v after a step of %v", names[i], took.Round(time.Millisecond), step)
			}
		}
		now := fencesOf(t, fenced)
		for i := range fenced {
			if now[i] <= fences[i] {
				t.Errorf("%s: PostgreSQL's fence after a step of %v is %d, not above %d before it", names[i], step, now[i], fences[i])
			}
			log("%s: PostgreSQL's fence went up %v across the step", names[i], time.Duration(now[i]-fences[i])*time.Microsecond)
		}
		fences = now
		log("locks lost to the step so far: %v", lostLocks(apis)-lost)
	}
	for _, s := range sales {
		s.finish(t, apis...)
	}
	log("all four sold out; queued purchases delivered to a consumer more than once (claimed): %d", redelivered())
	for i, s := range sales {
		t.Run(names[i], func(t *testing.T) { s.verify(t, apis[1], noneUnanswered) })
	}
	for _, p := range apis {
		refused := strings.Count(p.Log.String(), "write refused")
		t.Logf("%s: busy %v, locks lost %v, releases failed %v, writes refused by the fence %d", p.Name,
			p.Metric("seckill_purchases_total", `outcome="busy"`), p.Metric("seckill_lock_lost_total", ""),
			p.Metric("seckill_lock_release_errors_total", ""), refused)
	}
}

// fencesOf reads the fence PostgreSQL holds for each sale's product.
func fencesOf(t *testing.T, sales []*sale) []int64 {
	t.Helper()
	f := make([]int64, len(sales))
	for i, s := range sales {
		f[i] = s.auditPG(t).Fence
	}
	return f
}

// lostLocks is how many product locks the watchdogs of apis found lost.
func lostLocks(apis []*apiProc) float64 {
	n := 0.0
	for _, p := range apis {
		n += p.Metric("seckill_lock_lost_total", "")
	}
	return n
}

// watchRedeliveries samples the pending entries of the queue stream every 10 ms until the
// test ends, and returns a function that tells how many entries it saw delivered to a
// consumer more than once: claimed from the consumer writing them.
func watchRedeliveries(t *testing.T, rdb *redis.Client, stream string) func() int {
	ctx, cancel := context.WithCancel(context.Background())
	seen := map[string]bool{}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			pending, _ := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: inventory.QueueGroup,
				Start: "-", End: "+", Count: 1000}).Result()
			mu.Lock()
			for _, p := range pending {
				if p.RetryCount > 1 {
					seen[p.ID] = true
				}
			}
			mu.Unlock()
			select {
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(seen)
	}
}
