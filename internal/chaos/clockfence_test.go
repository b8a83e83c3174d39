//go:build linux

package chaos_test

import (
	"testing"
	"time"
)

// clockAhead is how far ahead the Redis host's clock runs before it is set right.
const clockAhead = time.Minute

// TestFenceAfterClockSetRightAndRedisLost: the Redis host's clock runs a minute ahead while a
// dlock and a fair dlock product sell over two API processes, so PostgreSQL holds fences a
// minute in the future; the clock is set right and Redis restarts without persistence, its
// fence keys lost. The next fences minted come from the right clock, a minute below
// PostgreSQL's. The holders, still holding their locks, raise their fences above the
// product's and write (seckill_lock_fences_raised_total): each sale sells again within
// seconds, not after the minute the clock needs to catch up (the code before the raise
// answered busy until then), and every answer is true.
func TestFenceAfterClockSetRightAndRedisLost(t *testing.T) {
	log := faultTest(t)
	b, red, clock := ownRedisFakeClock(t)
	apis := b.startAPIs(t, 2, map[string]string{"LOCK_TTL": "500ms", "LOCK_WAIT": "1s"})
	sales := []*sale{
		newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 300, thinkMS: 50}),
		newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 300, thinkMS: 50, fair: true}),
	}
	names := []string{"dlock", "dlock fair"}
	for _, s := range sales { // Redis forgets the holder's key: see allowTwoHolders
		s.allowTwoHolders("Redis restarted without its data: the holder's key forgotten, its batch may still commit")
	}
	clock.Step(t, clockAhead)
	for _, s := range sales {
		s.start(3, apis...)
	}
	for _, s := range sales {
		s.waitBought(t, 10)
	}
	ahead := fencesOf(t, sales)
	clock.Step(t, -clockAhead)
	red.Stop()
	red.Start()
	restarted := time.Now()
	for i, s := range sales {
		s.waitBought(t, s.bought.Load()+5)
		took := time.Since(restarted)
		log("%s sells again %v after the clock was set right and Redis restarted empty", names[i], took.Round(time.Millisecond))
		if took > clockAhead/4 {
			t.Errorf("%s stalled %v after the restart: fences below PostgreSQL's were not raised", names[i], took.Round(time.Millisecond))
		}
	}
	now := fencesOf(t, sales)
	for i := range sales {
		if now[i] <= ahead[i] {
			t.Errorf("%s: PostgreSQL's fence %d after the restart is not above %d before it", names[i], now[i], ahead[i])
		}
	}
	raised := 0.0
	for _, p := range apis {
		raised += p.Metric("seckill_lock_fences_raised_total", "")
	}
	log("lock fences raised above the products' after the restart: %v", raised)
	if raised == 0 {
		t.Error("no lock fence was raised: the restart lost nothing the test depends on")
	}
	for _, s := range sales {
		s.finish(t, apis...)
	}
	for i, s := range sales {
		t.Run(names[i], func(t *testing.T) { s.verify(t, apis[1], noneUnanswered) })
	}
}
