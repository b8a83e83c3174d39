//go:build linux

package chaos_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/testenv"
)

// TestRedisClockStepExpiresAdmissions: the redis strategy's gate admits at most stock buyers
// and keeps each admission pending, by the Redis clock, for PURCHASE_TIMEOUT + 11 s (15 s
// here), longer than any purchase can take. The Redis host's clock steps forward 16 s at
// the moment the gate has sold its last unit and buyers it admitted are still writing
// (think_ms 1000): their admissions look expired at once. The next buyers find the gate sold
// out with expired admissions and reconcile them with PostgreSQL, which has no order of
// theirs yet, so their units go back to the gate and are admitted again: more buyers reach
// PostgreSQL than it has units. PostgreSQL's guards sell each unit once, the buyers it has no
// unit for are told sold_out, the gate is synced, and every answer stays true.
func TestRedisClockStepExpiresAdmissions(t *testing.T) {
	log := faultTest(t)
	b, red, clock := ownRedisFakeClock(t)
	apis := b.startAPIs(t, 2, map[string]string{"PURCHASE_TIMEOUT": "4s"})
	s := newSale(t, apis[0], b.dsn, product{strategy: "redis", stock: 24, thinkMS: 1000})
	rdb := red.Client()
	ctx := context.Background()
	stockKey, pendingKey := b.keys().GateStock(s.id), b.keys().GatePending(s.id)
	g := s.start(8, apis...)
	testenv.Eventually(t, 30*time.Second, "the gate sold out with admissions in flight", func() bool {
		stock, err := rdb.Get(ctx, stockKey).Int()
		return err == nil && stock == 0 && rdb.HLen(ctx, pendingKey).Val() >= 2
	})
	pending := rdb.HLen(ctx, pendingKey).Val()
	clock.Step(t, 16*time.Second)
	log("clock stepped +16s with the gate sold out and %d admissions in flight; PostgreSQL stock %d", pending, s.pgStock(t))
	g.halt()
	s.soldOut.Store(false)
	s.start(8, apis...) // the next buyers find the admissions expired
	s.finish(t, apis...)
	given := 0.0
	for _, p := range apis {
		given += p.Metric("seckill_gate_reconciled_total", `result="given_back"`)
	}
	log("sold out; admissions given back by the reconciliation: %v", given)
	if given == 0 {
		t.Errorf("no admission was given back: the step did not expire the admissions in flight")
	}
	s.verify(t, apis[1], noneUnanswered)
}

// TestRedisClockStepRateLimits: the purchase rate limits are GCRA in Redis, by its clock.
// Each user's (and address's) key holds a theoretical arrival time. A step back puts every
// recent one in the future: before gcra.lua brought such a time back to the furthest an
// attempt can put it (one burst ahead), a user who had tried within the last second was
// refused 429 for about the step (4.3 s after a step of -5 s here), whatever budget was left,
// and with RATE_LIMIT_ADDR every new user behind an active address too (17 of 18 attempts).
// Now the first attempt after the step waits one interval at most. A step forward gives at
// most one fresh burst at once.
func TestRedisClockStepRateLimits(t *testing.T) {
	log := faultTest(t)
	b, _, clock := ownRedisFakeClock(t)
	apis := b.startAPIs(t, 1, map[string]string{"RATE_LIMIT_USER": "10/s", "RATE_LIMIT_ADDR": "100/s"})
	s := newSale(t, apis[0], b.dsn, product{strategy: "dlock", stock: 100})
	c := apiClient(t, apis[0])
	ctx := context.Background()
	try := func(user int64) (status int, retryAfter string) {
		_, err := c.Purchase(ctx, s.id, user)
		var p *api.Problem
		switch {
		case err == nil:
			return http.StatusCreated, ""
		case errors.As(err, &p):
			return p.Status, p.RetryAfter
		}
		t.Fatalf("user %d: %v", user, err)
		return 0, ""
	}
	if status, _ := try(1); status != http.StatusCreated {
		t.Fatalf("user 1's first purchase = %d", status)
	}
	stepped := clock.Step(t, -clockStep)
	var refused, others int
	var firstWait string
	for time.Since(stepped) < 2*clockStep {
		status, wait := try(1)
		if status != http.StatusTooManyRequests {
			break
		}
		refused++
		if firstWait == "" {
			firstWait = wait
		}
		if other, _ := try(int64(100 + refused)); other == http.StatusTooManyRequests {
			others++ // a user never seen, behind the same address
		}
		time.Sleep(200 * time.Millisecond)
	}
	lockout := time.Since(stepped)
	log("step %v: user 1, one purchase before the step, refused 429 for %v (%d attempts, first Retry-After %ss); "+
		"new users behind the same address refused %d of %d times", -clockStep, lockout.Round(10*time.Millisecond),
		refused, firstWait, others, refused)
	if refused > 2 || others > 1 { // one interval of each budget at most
		t.Errorf("after a step of %v: user 1 refused %d times in %v, new users behind its address %d times; want one refusal per budget at most",
			-clockStep, refused, lockout.Round(10*time.Millisecond), others)
	}

	// A step forward: a user who spent the burst gets a new one at once.
	user := int64(1000)
	spent := 0
	for ; spent < 20; spent++ {
		if status, _ := try(user); status == http.StatusTooManyRequests {
			break
		}
	}
	clock.Step(t, clockStep)
	again := 0
	began := time.Now()
	for ; again < 20; again++ {
		if status, _ := try(user); status == http.StatusTooManyRequests {
			break
		}
	}
	// What the budget earned back while the attempts ran (RATE_LIMIT_USER 10/s): on a loaded
	// machine 20 attempts may take long enough to earn several.
	refill := int(time.Since(began).Seconds() * 10)
	log("step +%v: user %d allowed %d attempts before the step and %d right after it (%d earned back meanwhile)",
		clockStep, user, spent, again, refill)
	if again > spent+1+refill {
		t.Errorf("after a step forward %d attempts were allowed at once, more than the burst before it (%d) and %d earned back", again, spent, refill)
	}
}
