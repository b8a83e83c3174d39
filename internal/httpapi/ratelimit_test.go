package httpapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/testenv"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want Rate
		ok   bool
	}{
		{"off", Rate{}, true},
		{"10/s", Rate{10, time.Second}, true},
		{"100/m", Rate{100, time.Minute}, true},
		{"1/h", Rate{1, time.Hour}, true},
		{"1000000/s", Rate{1_000_000, time.Second}, true},
		{"", Rate{}, false},
		{"0/s", Rate{}, false},
		{"-1/s", Rate{}, false},
		{"10", Rate{}, false},
		{"10/d", Rate{}, false},
		{"ten/s", Rate{}, false},
		{"1000001/s", Rate{}, false},
		{"Off", Rate{}, false},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseRate(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		if tt.ok && got.String() != tt.in {
			t.Errorf("ParseRate(%q).String() = %q", tt.in, got.String())
		}
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		wait time.Duration
		want string
	}{
		{-1, "1"}, {0, "1"}, {time.Millisecond, "1"}, {time.Second, "1"},
		{1001 * time.Millisecond, "2"}, {59500 * time.Millisecond, "60"},
	}
	for _, tt := range tests {
		if got := retryAfter(rateLimited{tt.wait}); got != tt.want {
			t.Errorf("retryAfter(%s) = %q, want %q", tt.wait, got, tt.want)
		}
	}
	if got := retryAfter(errors.New("other")); got != "1" {
		t.Errorf("retryAfter(other) = %q, want 1", got)
	}
}

func TestAddrKey(t *testing.T) {
	tests := []struct{ addr, want string }{
		{"192.0.2.1", "192.0.2.1"},
		{"::ffff:192.0.2.1", "192.0.2.1"}, // IPv4-mapped: the IPv4 client
		{"::ffff:c000:201", "192.0.2.1"},
		{"2001:db8:1:2::1", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"},
		{"2001:DB8:1:2:0:0:0:7", "2001:db8:1:2::/64"},
		{"2001:db8:1:3::1", "2001:db8:1:3::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"::1", "::/64"},
		{"", ""},
		{"not an address", "not an address"},
	}
	for _, tt := range tests {
		if got := addrKey(tt.addr); got != tt.want {
			t.Errorf("addrKey(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

func TestNewLimiterOff(t *testing.T) {
	if l := NewLimiter(LimiterConfig{Prefix: "p"}); l != nil {
		t.Fatalf("NewLimiter with both limits off = %v, want nil", l)
	}
}

// TestLimiterFailsOpen: with Redis unreachable, purchases go through, and the outage is
// logged at warn once, not once per request.
func TestLimiterFailsOpen(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens there now: connections are refused
	rdb := redis.NewClient(&redis.Options{Addr: dead, MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second})
	defer rdb.Close()
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	limits := RateLimits{User: Rate{1, time.Hour}, Addr: Rate{1, time.Hour}}
	obs := &countingObserver{}
	l := NewLimiter(LimiterConfig{Redis: rdb, Prefix: "t", Limits: limits, Logger: log, Observer: obs})
	for i := range 3 {
		if err := l.Allow(context.Background(), 1, 7, "192.0.2.1"); err != nil {
			t.Fatalf("attempt %d with Redis down = %v, want allowed", i, err)
		}
	}
	if n := strings.Count(logs.String(), "rate limiter unavailable"); n != 1 {
		t.Fatalf("logged %d fail-open warnings, want 1:\n%s", n, logs.String())
	}
	if n := obs.unavailable.Load(); n != 6 { // 3 attempts, 2 scopes each
		t.Errorf("observer heard of %d unanswered checks, want 6", n)
	}
}

// countingObserver counts what a LimiterObserver hears.
type countingObserver struct{ limited, unavailable atomic.Int64 }

func (o *countingObserver) RateLimited(string)        { o.limited.Add(1) }
func (o *countingObserver) LimiterUnavailable(string) { o.unavailable.Add(1) }

// BenchmarkLimiterAllow: one limit check, the cost the per-user limit adds to a purchase of
// a product that is not sold out, by 1 and by 64 concurrent callers: the Limiter (the checks
// of concurrent callers batched into one gcra.lua call) against redis_rate (one Lua call per
// check, auto-pipelined: what the Limiter did before), on the same Redis in the same run. It
// also reports Redis's CPU time per check (redis-us/op, from INFO cpu), which is most of
// what a check costs the machine.
func BenchmarkLimiterAllow(b *testing.B) {
	rdb, prefix := testenv.Redis(b)
	limits := RateLimits{User: Rate{1_000_000, time.Second}}
	batched := NewLimiter(LimiterConfig{Redis: rdb, Prefix: prefix, Limits: limits})
	ap, err := rdb.AutoPipeline()
	if err != nil {
		b.Fatal(err)
	}
	rl := redis_rate.NewLimiter(ap)
	var user atomic.Int64
	for _, lib := range []struct {
		name  string
		allow func() error
	}{
		{"batched", func() error { return batched.Allow(context.Background(), 1, user.Add(1), "192.0.2.1") }},
		{"redis_rate", func() error {
			res, err := rl.Allow(context.Background(), fmt.Sprintf("%s:rl:u:1:%d", prefix, user.Add(1)), redis_rate.PerSecond(1_000_000))
			if err == nil && res.Allowed == 0 {
				err = errRateLimited
			}
			return err
		}},
	} {
		for _, callers := range []int{1, 64} {
			b.Run(fmt.Sprintf("%s/callers=%d", lib.name, callers), func(b *testing.B) {
				cpu := redisCPU(b, rdb)
				b.SetParallelism(max(1, callers/runtime.GOMAXPROCS(0)))
				if callers == 1 {
					for b.Loop() {
						if err := lib.allow(); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := lib.allow(); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				b.ReportMetric((redisCPU(b, rdb)-cpu).Seconds()*1e6/float64(b.N), "redis-us/op")
			})
		}
	}
}

// redisCPU is the CPU time the Redis of rdb has used (INFO cpu: used_cpu_sys + used_cpu_user).
func redisCPU(b *testing.B, rdb *redis.Client) time.Duration {
	info, err := rdb.InfoMap(context.Background(), "cpu").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total float64
	for _, k := range []string{"used_cpu_sys", "used_cpu_user"} {
		f, err := strconv.ParseFloat(info["CPU"][k], 64)
		if err != nil {
			b.Fatalf("INFO cpu %s: %v", k, err)
		}
		total += f
	}
	return time.Duration(total * float64(time.Second))
}

// TestLimiterConcurrentChecks: checks from many goroutines share calls to Redis, yet each
// caller gets its own answer: two limiters (two API processes) on one Redis grant each user
// exactly its budget, however the attempts interleave.
func TestLimiterConcurrentChecks(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	other := redis.NewClient(&redis.Options{Addr: rdb.Options().Addr})
	t.Cleanup(func() { other.Close() })
	exactBudgets(t, prefix, rdb, other)
}

// exactBudgets makes 30 attempts of each of 40 users, from many goroutines, alternately
// through a limiter on a and one on b (a budget of 5 an hour each), and checks that each user
// was allowed exactly 5 and every other attempt refused.
func exactBudgets(t *testing.T, prefix string, a, b redis.UniversalClient) {
	t.Helper()
	const users, attempts, budget = 40, 30, 5
	limits := RateLimits{User: Rate{budget, time.Hour}}
	obs := &countingObserver{}
	procs := []*Limiter{
		NewLimiter(LimiterConfig{Redis: a, Prefix: prefix, Limits: limits, Observer: obs}),
		NewLimiter(LimiterConfig{Redis: b, Prefix: prefix, Limits: limits, Observer: obs}),
	}
	allowed := make([]atomic.Int64, users)
	var wg sync.WaitGroup
	for u := range users {
		for a := range attempts {
			wg.Go(func() {
				err := procs[a%2].Allow(context.Background(), 1, int64(u+1), "192.0.2.1")
				switch {
				case err == nil:
					allowed[u].Add(1)
				case !errors.Is(err, errRateLimited):
					t.Errorf("user %d: %v, want allowed or rate limited", u+1, err)
				}
			})
		}
	}
	wg.Wait()
	for u := range users {
		if n := allowed[u].Load(); n != budget {
			t.Errorf("user %d: %d of %d attempts allowed, want %d", u+1, n, attempts, budget)
		}
	}
	if n, want := obs.limited.Load(), int64(users*(attempts-budget)); n != want {
		t.Errorf("observer heard of %d refusals, want %d", n, want)
	}
	if n := obs.unavailable.Load(); n != 0 {
		t.Errorf("observer heard of %d unanswered checks, want none", n)
	}
}
