//go:build linux

package chaos_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestRedisRestart: the Redis server of two API processes is killed mid-sale and started
// again empty (no persistence) 100ms later: every lock, fence counter, sold-out mark and
// redis-strategy gate is forgotten while buyers hold locks (the restart comes just after a
// dlock holder took its lock; think_ms spans its watchdog's renewals) and gate admissions.
// Afterwards new fences still exceed the one PostgreSQL recorded (they are minted from
// Redis's clock), the gate is re-seeded from PostgreSQL, and both sales finish without an
// oversell or a buyer sold twice.
func TestRedisRestart(t *testing.T) {
	log := faultTest(t)
	b, red := ownRedis(t)
	apis := b.startAPIs(t, 2, map[string]string{"LOCK_TTL": "300ms", "LOCK_WAIT": "1s"})
	dlock := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 30, thinkMS: 250})
	gated := newSale(t, apis[0], b.dsn, product{strategy: "redis", stock: 60, thinkMS: 200})
	dlock.start(6, apis...)
	dlock.waitBought(t, 8)
	gated.start(6, apis...)
	gated.waitBought(t, 8)
	fence := dlock.auditPG(t).Fence

	// Kill Redis just after a dlock holder took the lock: its watchdog renews during the gap.
	rdb := redis.NewClient(&redis.Options{Addr: red.Addr})
	defer rdb.Close()
	key, ctx := b.keys().Lock(dlock.id), context.Background()
	waitNewHolder(t, "a new dlock holder", func() string { return rdb.Get(ctx, key).Val() })
	red.Stop()
	time.Sleep(100 * time.Millisecond) // the restart's gap: the fault, not an assertion
	red.Start()
	log("Redis restarted empty; sold so far: dlock %d, redis %d", dlock.bought.Load(), gated.bought.Load())
	for _, s := range []*sale{dlock, gated} {
		s.waitBought(t, s.bought.Load()+3) // the sale goes on after the restart
	}
	for _, s := range []*sale{dlock, gated} {
		s.finish(t, apis...)
	}
	log("both sold out")

	t.Run("dlock", func(t *testing.T) {
		dlock.verify(t, apis[1], noneUnanswered)
		if after := dlock.auditPG(t).Fence; after <= fence {
			t.Errorf("fence after the restart %d <= before it %d: new holders could not write", after, fence)
		}
		for _, p := range apis {
			t.Logf("%s: locks lost %v, renewals failed %v, release errors %v", p.Name,
				p.Metric("seckill_lock_lost_total", ""), p.Metric("seckill_lock_renewals_total", `result="error"`),
				p.Metric("seckill_lock_release_errors_total", ""))
		}
	})
	t.Run("redis", func(t *testing.T) {
		gated.verify(t, apis[1], noneUnanswered)
	})
}
