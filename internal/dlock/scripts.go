package dlock

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The scripts run with Script.Run: EVALSHA, falling back to EVAL when the
// server does not have the script cached yet. Every key a script touches is
// passed in KEYS and shares the lock key's hash slot.
var (
	//go:embed scripts/mint.lua
	mintSrc string // the prelude of every acquire script: mint, the fence
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

	acquireScript = redis.NewScript(mintSrc + acquireSrc)
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
	waitMarkTTLArg    any = waitMarkTTL.Milliseconds()
	releaseMarkTTLArg any = releaseMarkTTL.Milliseconds()
)

// acquireOn runs acquire.lua for r on rdb (the Redis, or one Redlock node).
func (r *request) acquireOn(ctx context.Context, rdb redis.UniversalClient) (any, error) {
	return acquireScript.Run(ctx, rdb, r.keys, r.token, r.ttl.Milliseconds(), fenceKeyTTLArg, waitMarkTTLArg).Result()
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

// releaseOn runs release.lua for r on rdb: 1 when it held the key (or this release's first
// call, whose reply was lost, deleted it), else 0.
func (r *request) releaseOn(ctx context.Context, rdb redis.UniversalClient) (int64, error) {
	keys := []string{r.key, r.channel(), releasedKey(r.key, r.token)}
	return releaseScript.Run(ctx, rdb, keys, r.token, releaseMarkTTLArg).Int64()
}

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

func (c *Client) releaseCall(ctx context.Context, r *request) (int64, error) {
	if c.rl != nil {
		return c.rl.release(ctx, r)
	}
	if r.fair {
		keys := []string{r.key, r.queueKey, releasedKey(r.key, r.token)}
		return fairReleaseScript.Run(ctx, c.rdb, keys, r.token, r.channel(), releaseMarkTTLArg).Int64()
	}
	if r.rw == rwRead {
		return c.readerCall(ctx, r, "release", r.channel())
	}
	return r.releaseOn(ctx, c.rdb)
}
