package dlock

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The scripts run with Script.Run: EVALSHA, falling back to EVAL when the
// server does not have the script cached yet. Every key a script touches is
// passed in KEYS and shares the lock key's hash slot.
var (
	//go:embed scripts/mint.lua
	mintSrc string // the prelude of every acquire script: mint, the fence
	//go:embed scripts/take.lua
	takeSrc string // acquire.lua's common case, before mint.lua
	//go:embed scripts/acquire.lua
	acquireSrc string
	//go:embed scripts/release.lua
	releaseSrc string
	//go:embed scripts/handoff.lua
	handoffSrc string
	//go:embed scripts/refresh.lua
	refreshSrc string
	//go:embed scripts/pttl.lua
	pttlSrc string
	//go:embed scripts/fairacquire.lua
	fairAcquireSrc string
	//go:embed scripts/fairleave.lua
	fairLeaveSrc string
	//go:embed scripts/fairrelease.lua
	fairReleaseSrc string
	//go:embed scripts/rwacquire.lua
	rwAcquireSrc string
	//go:embed scripts/rwreader.lua
	rwReaderSrc string
	//go:embed scripts/rwleave.lua
	rwLeaveSrc string
	//go:embed scripts/refence.lua
	refenceSrc string

	acquireScript = redis.NewScript(constants(takeSrc + mintSrc + acquireSrc))
	releaseScript = redis.NewScript(releaseSrc)
	handoffScript = redis.NewScript(mintSrc + handoffSrc) // ClientOptions.Cohort
	refreshScript = redis.NewScript(refreshSrc)
	pttlScript    = redis.NewScript(pttlSrc)
	refenceScript = redis.NewScript(mintSrc + refenceSrc) // Lock.RaiseFence

	fairAcquireScript = redis.NewScript(mintSrc + fairAcquireSrc) // ObtainFair
	fairLeaveScript   = redis.NewScript(fairLeaveSrc)
	fairReleaseScript = redis.NewScript(fairReleaseSrc)
	rwAcquireScript   = redis.NewScript(mintSrc + rwAcquireSrc) // RWMutex
	rwReaderScript    = redis.NewScript(rwReaderSrc)
	rwLeaveScript     = redis.NewScript(rwLeaveSrc)
)

// Script arguments that never change, boxed once: an int64 above 255 put in an interface is
// a heap allocation per call.
var (
	fenceKeyTTLArg    any = fenceKeyTTL.Milliseconds()
	releaseMarkTTLArg any = releaseMarkTTL.Milliseconds()
)

// constants writes the expiries that never change into src, where acquire.lua and take.lua
// name them: two arguments fewer to send and for Redis to read at every acquire.
func constants(src string) string {
	return strings.NewReplacer(
		"FENCE_KEY_TTL_MS", strconv.FormatInt(fenceKeyTTL.Milliseconds(), 10), // in quotes: Lua strings,
		"WAIT_MARK_TTL_MS", strconv.FormatInt(waitMarkTTL.Milliseconds(), 10), // which Redis takes as they are
	).Replace(src)
}

// acquireOn runs acquire.lua for r on rdb (the Redis, or one Redlock node).
func (r *request) acquireOn(ctx context.Context, rdb redis.UniversalClient) (any, error) {
	return acquireScript.Run(ctx, rdb, r.keys, r.token, r.ttl.Milliseconds()).Result()
}

// parseAcquire reads the answer of acquire.lua (and rwacquire.lua): the fence when the lock
// was taken, or else the holder's remaining ttl (zero when unknown).
func parseAcquire(res any) (fence int64, pttl time.Duration, err error) {
	switch v := res.(type) {
	case int64:
		if v <= 0 {
			return 0, 0, fmt.Errorf("bad fence %d", v)
		}
		return v, 0, nil
	case []any: // busy: {pttl}
		if len(v) != 1 {
			break
		}
		if ms, ok := v[0].(int64); ok {
			return 0, time.Duration(max(ms, 0)) * time.Millisecond, nil
		}
	}
	return 0, 0, fmt.Errorf("unexpected reply %v", res)
}

// releaseOn runs release.lua for r on rdb: 1 when it held the key, else 0. go-redis sends a
// call again when its connection broke before the reply: its first run may have deleted the
// key, and the call sent again finds it gone, or taken by the next holder. resent reports
// that the call was sent more than once; see resentInTime.
func (r *request) releaseOn(ctx context.Context, rdb redis.UniversalClient) (n int64, resent bool, err error) {
	keys := r.keys[:2] // the key and its release channel
	token := &sentArg{b: []byte(r.token)}
	n, err = releaseScript.EvalSha(ctx, rdb, keys, token).Int64()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		token = &sentArg{b: token.b} // EVAL is a new call, not one sent again
		n, err = releaseScript.Eval(ctx, rdb, keys, token).Int64()
	}
	return n, token.sent.Load() > 1, err
}

// resentInTime turns the answer of a release sent more than once that found the key not held
// into 1 when the lock's safe deadline has not passed: until then the key held the lock's
// token unless Redis lost it, so the first run deleted it (docs/dlock.md, "A release whose
// reply was lost").
func (l *Lock) resentInTime(n int64, resent bool, err error) (int64, error) {
	if err == nil && n == 0 && resent && time.Now().Before(l.Deadline()) {
		n = 1
	}
	return n, err
}

// sentArg is a script argument that counts how many times go-redis wrote it to a
// connection: more than once means the call was sent again.
type sentArg struct {
	b    []byte
	sent atomic.Int32
}

// MarshalBinary returns the argument's bytes, counting the write.
func (a *sentArg) MarshalBinary() ([]byte, error) {
	a.sent.Add(1)
	return a.b, nil
}

// String returns the argument, as hooks that log commands print it, without counting.
func (a *sentArg) String() string { return string(a.b) }

// notHeldPTTL is what pttl.lua returns when the key does not hold the token.
const notHeldPTTL = -3

// pttlCall, refreshCall and releaseCall run a Lock's scripts: in the single
// Redis, or on every Redlock node, where a majority decides (see redlock).
// They answer as the scripts do: ms or notHeldPTTL; 1 or 0; 1 or 0.

func (c *Client) pttlCall(ctx context.Context, r *request) (int64, error) {
	if c.rl != nil {
		return c.rl.pttl(ctx, r)
	}
	if r.rw == rwRead {
		return c.readerCall(ctx, r, "pttl", "")
	}
	return pttlScript.Run(ctx, c.rdb, []string{r.key}, r.token).Int64()
}

func (c *Client) refreshCall(ctx context.Context, r *request, ttl time.Duration) (int64, error) {
	if c.rl != nil {
		return c.rl.refresh(ctx, r, ttl)
	}
	if r.rw == rwRead {
		return c.readerCall(ctx, r, "refresh", ttl.Milliseconds())
	}
	return refreshScript.Run(ctx, c.rdb, []string{r.key}, r.token, ttl.Milliseconds()).Int64()
}

func (c *Client) releaseCall(ctx context.Context, l *Lock) (int64, error) {
	r := l.r
	if c.rl != nil {
		return c.rl.release(ctx, l)
	}
	if r.fair {
		keys := []string{r.key, r.queueKey, releasedKey(r.key, r.token)}
		return fairReleaseScript.Run(ctx, c.rdb, keys, r.token, r.channel(), releaseMarkTTLArg).Int64()
	}
	if r.rw == rwRead {
		return c.readerCall(ctx, r, "release", r.channel())
	}
	return l.resentInTime(r.releaseOn(ctx, c.rdb))
}
