package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/tracing"
)

// Rate is a rate limit: at most N requests per Per, bursts of up to N; zero is off.
type Rate struct {
	N   int
	Per time.Duration
}

// Off reports whether r limits nothing.
func (r Rate) Off() bool { return r.N <= 0 || r.Per <= 0 }

// String formats r the way ParseRate reads it.
func (r Rate) String() string {
	if r.Off() {
		return "off"
	}
	for unit, per := range rateUnits {
		if per == r.Per {
			return strconv.Itoa(r.N) + "/" + unit
		}
	}
	return strconv.Itoa(r.N) + "/" + r.Per.String()
}

var rateUnits = map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}

// ParseRate reads "N/s", "N/m", "N/h" or "off".
func ParseRate(s string) (Rate, error) {
	if s == "off" {
		return Rate{}, nil
	}
	n, unit, ok := strings.Cut(s, "/")
	per, known := rateUnits[unit]
	count, err := strconv.Atoi(n)
	if !ok || !known || err != nil || count < 1 || count > 1_000_000 {
		return Rate{}, fmt.Errorf("rate %q: want N/s, N/m or N/h with N from 1 to 1000000, or off", s)
	}
	return Rate{N: count, Per: per}, nil
}

// RateLimits are the limits on purchase attempts. A zero Rate is off.
type RateLimits struct {
	User Rate // per user id and product
	Addr Rate // per client address (the TCP peer), across products
}

// Limiter enforces RateLimits in Redis, shared by every API process, and fails open. Safe
// for concurrent use.
type Limiter struct {
	checks   *checkBatches
	prefix   string
	limits   RateLimits
	exempt   func(product int64) bool
	log      *slog.Logger
	obs      LimiterObserver
	tracer   trace.Tracer // nil: no spans
	lastWarn atomic.Int64 // unix nanoseconds of the last fail-open warning
}

// LimiterConfig configures NewLimiter.
type LimiterConfig struct {
	Redis  redis.UniversalClient // required when a limit is on
	Prefix string                // namespace of the limiter's keys
	Limits RateLimits
	// Exempt reports products not limited (sold out, or outside their sale window). Nil: none.
	Exempt   func(product int64) bool
	Logger   *slog.Logger    // default: discard
	Observer LimiterObserver // default: none
	// Tracer, when it records, gives each check a span, "ratelimit.check"; default: none.
	Tracer trace.TracerProvider
}

// LimiterObserver counts the limiter's events; its methods must be quick and concurrency-safe.
type LimiterObserver interface {
	// RateLimited is called per refused attempt, scope "user" or "addr".
	RateLimited(scope string)
	// LimiterUnavailable is called per check Redis did not answer.
	LimiterUnavailable(scope string)
}

type noLimiterObserver struct{}

func (noLimiterObserver) RateLimited(string)        {}
func (noLimiterObserver) LimiterUnavailable(string) {}

// warnEvery spaces fail-open warnings: one line per period is enough to see an outage.
const warnEvery = 10 * time.Second

// NewLimiter returns a Limiter, or nil, which limits nothing, when both limits are off.
func NewLimiter(cfg LimiterConfig) *Limiter {
	if cfg.Limits.User.Off() && cfg.Limits.Addr.Off() {
		return nil
	}
	l := &Limiter{prefix: cfg.Prefix, limits: cfg.Limits, exempt: cfg.Exempt, log: cfg.Logger, obs: cfg.Observer,
		tracer: tracing.Tracer(cfg.Tracer)}
	if l.obs == nil {
		l.obs = noLimiterObserver{}
	}
	if l.exempt == nil {
		l.exempt = func(int64) bool { return false }
	}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	l.checks = newCheckBatches(cfg.Redis)
	return l
}

// Allow spends one attempt of the user's and addr's budgets, or returns errRateLimited with
// the wait.
func (l *Limiter) Allow(ctx context.Context, product, user int64, addr string) error {
	if l == nil || l.exempt(product) {
		return nil
	}
	ctx, span := tracing.Start(ctx, l.tracer, "ratelimit.check")
	err := l.takeAddr(ctx, addr)
	if err == nil {
		err = l.takeUser(ctx, product, user)
	}
	endCheck(span, err)
	return err
}

// endCheck ends the span of a rate-limit check, marked with whether it refused the attempt
// (an answer, not an error).
func endCheck(span trace.Span, err error) {
	if span.IsRecording() {
		span.SetAttributes(attribute.Bool("seckill.rate_limited", err != nil))
	}
	span.End()
}

// AllowBundle is Allow for a bundle: addr's budget once, the user's per product.
func (l *Limiter) AllowBundle(ctx context.Context, products []int64, user int64, addr string) error {
	if l == nil {
		return nil
	}
	ctx, span := tracing.Start(ctx, l.tracer, "ratelimit.check")
	err := l.allowBundle(ctx, products, user, addr)
	endCheck(span, err)
	return err
}

func (l *Limiter) allowBundle(ctx context.Context, products []int64, user int64, addr string) error {
	spent := false
	for _, product := range products {
		if l.exempt(product) {
			continue
		}
		if !spent {
			if err := l.takeAddr(ctx, addr); err != nil {
				return err
			}
			spent = true
		}
		if err := l.takeUser(ctx, product, user); err != nil {
			return err
		}
	}
	return nil
}

func (l *Limiter) takeAddr(ctx context.Context, addr string) error {
	if wait, ok := l.take(ctx, "addr", "a:"+addrKey(addr), l.limits.Addr); !ok {
		return rateLimited{wait}
	}
	return nil
}

func (l *Limiter) takeUser(ctx context.Context, product, user int64) error {
	if wait, ok := l.take(ctx, "user", fmt.Sprintf("u:%d:%d", product, user), l.limits.User); !ok {
		return rateLimited{wait}
	}
	return nil
}

// addrKey is the client an address stands for: an IPv4 address (also written IPv4-mapped,
// ::ffff:192.0.2.1) as is, and an IPv6 address by its /64 (2001:db8:1:2::/64), because one
// IPv6 host is usually given a whole /64 and could otherwise rotate addresses to get a
// fresh budget each time. Zones are dropped; text that is not an address is kept as is.
func addrKey(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	p, _ := ip.Prefix(64) // cannot fail: a 128-bit address without zone
	return p.String()
}

func (l *Limiter) take(ctx context.Context, scope, key string, r Rate) (time.Duration, bool) {
	if r.Off() {
		return 0, true
	}
	// The key redis_rate v10.0.1 would use: its own "rate:" before ours.
	c := &check{key: "rate:" + l.prefix + ":rl:" + key, rate: r}
	l.checks.do(ctx, c)
	switch {
	case c.err != nil:
		l.failOpen(ctx, scope, c.err)
		return 0, true
	case !c.ok:
		l.obs.RateLimited(scope)
		return c.wait, false
	}
	return 0, true
}

// failOpen logs a limiter failure at warn, at most once per warnEvery; a cancelled
// request is not a failure of the limiter.
func (l *Limiter) failOpen(ctx context.Context, scope string, err error) {
	if ctx.Err() != nil {
		return
	}
	l.obs.LimiterUnavailable(scope)
	now, last := time.Now().UnixNano(), l.lastWarn.Load()
	if now-last >= int64(warnEvery) && l.lastWarn.CompareAndSwap(last, now) {
		l.log.WarnContext(ctx, "rate limiter unavailable: letting purchases through", "scope", scope, "err", err)
	}
}

// errRateLimited marks a request refused by a rate limit.
var errRateLimited = errors.New("rate limited")

// rateLimited is errRateLimited with the wait before a retry.
type rateLimited struct{ wait time.Duration }

func (e rateLimited) Error() string { return "rate limited for " + e.wait.String() }
func (e rateLimited) Unwrap() error { return errRateLimited }

// retryAfter is the Retry-After value for a rate-limited err: whole seconds, at least 1.
func retryAfter(err error) string {
	var e rateLimited
	secs := 1.0
	if errors.As(err, &e) {
		secs = max(1, math.Ceil(e.wait.Seconds()))
	}
	return strconv.FormatFloat(secs, 'f', 0, 64)
}
