package httpapi

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestLimiterAcrossClockStepBack: the limiter reads Redis's clock, which steps back 5 s
// (servers.StartRedisFakeClock: redis-server under libfaketime). A user who made one attempt
// just before, and an address with one attempt behind it, must not be refused for the length
// of the step: no attempt can put a budget further ahead than one burst, so anything beyond
// that is the step, not a debt. Their next attempt waits one interval at most, and is allowed
// after it. Before gcra.lua brought such a stored arrival time back to that bound, both were
// refused for about 4 s (the user 4.2 s, the address 4.0 s, in this test before the fix).
func TestLimiterAcrossClockStepBack(t *testing.T) {
	testenv.SkipShort(t, "a redis-server of its own")
	t.Parallel()
	red, clock := servers.StartRedisFakeClock(t)
	rdb := red.Client()
	ctx := context.Background()
	cases := []struct {
		name     string
		limits   RateLimits
		second   int64 // the user of the attempts after the step
		interval time.Duration
	}{
		{"user", RateLimits{User: Rate{10, time.Second}}, 7, 100 * time.Millisecond},
		{"address", RateLimits{Addr: Rate{100, time.Second}}, 8, 10 * time.Millisecond}, // a new user, same address
	}
	for _, tc := range cases {
		l := NewLimiter(LimiterConfig{Redis: rdb, Prefix: "clock-" + tc.name, Limits: tc.limits})
		if err := l.Allow(ctx, 1, 7, "192.0.2.1"); err != nil {
			t.Fatalf("%s: first attempt: %v", tc.name, err)
		}
	}
	clock.Step(t, -5*time.Second)
	for _, tc := range cases {
		l := NewLimiter(LimiterConfig{Redis: rdb, Prefix: "clock-" + tc.name, Limits: tc.limits})
		var e rateLimited
		err := l.Allow(ctx, 1, tc.second, "192.0.2.1")
		switch {
		case errors.As(err, &e) && e.wait > tc.interval+time.Millisecond: // floating point
			t.Errorf("%s budget after a step of -5s: refused for %v, want at most one interval (%v)", tc.name, e.wait, tc.interval)
			continue
		case errors.As(err, &e):
			time.Sleep(e.wait)
		case err != nil:
			t.Fatal(err)
		}
		if err := l.Allow(ctx, 1, tc.second, "192.0.2.1"); err != nil {
			t.Errorf("%s budget after a step of -5s, one interval later: %v, want allowed", tc.name, err)
		}
	}
}
