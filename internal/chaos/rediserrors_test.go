//go:build linux

package chaos_test

import (
	"context"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestRedisErrorReplies: Redis stays reachable but answers with an error reply instead of
// data, one class at a time, while two API processes sell a dlock and a redis product: OOM
// (maxmemory reached), READONLY (it became a replica), MASTERDOWN (a replica whose master is
// gone, not serving stale data), BUSY (a script runs past busy-reply-threshold) and LOADING
// (it is loading its dataset). Each fault is made on a redis-server of the test's own and
// checked to give that reply, lasts a second or two, and is lifted. Meanwhile every purchase
// is answered promptly with 503 unavailable (or busy) and Retry-After, never a 500, and
// nothing is logged at ERROR; afterwards both processes are ready and both sales sell out
// with PostgreSQL consistent. TestRedisErrorRepliesCluster covers CLUSTERDOWN and TRYAGAIN.
func TestRedisErrorReplies(t *testing.T) {
	faultTest(t)
	// DEBUG (Redis 7 disables it by default) makes the LOADING fault: see loadingFault.
	b, red := ownRedis(t, "--enable-debug-command", "yes")
	apis := b.startAPIs(t, 2, nil)
	e := newReplyEnv(t, apis, b.dsn)
	prober := red.Client()
	probe := func(ctx context.Context) error { // a write script, as the lock and the gate run
		return prober.Eval(ctx, "return redis.call('SET', KEYS[1], ARGV[1])", []string{b.prefix + ":probe"}, 1).Err()
	}
	for _, f := range redisFaults(red) {
		f.probe = probe
		e.run(t, f)
	}
	e.finish(t)
}

// serverFault is a fault made by internal/testenv/servers, as a replyFault.
func serverFault(class, how string, mk func(t *testing.T) *servers.RedisFault) replyFault {
	var f *servers.RedisFault
	return replyFault{class: class, how: how,
		start: func(t *testing.T) (<-chan struct{}, func() error) {
			f = mk(t)
			return f.Ended, f.Err
		},
		lift: func(t *testing.T) { f.Lift(t) },
	}
}

// The faults: OOM (maxmemory 1 byte, noeviction: every write refused, inside scripts too);
// READONLY and MASTERDOWN (the server becomes the replica of a master that never answers,
// serving stale data or not); BUSY (a script spinning 1.5s past a busy-reply-threshold of
// 50ms); LOADING (DEBUG RELOAD of 8,000 filler keys slowed by key-load-delay: a second or so).
func redisFaults(red *servers.Redis) []replyFault {
	return []replyFault{
		serverFault("OOM", "CONFIG SET maxmemory 1, policy noeviction", func(t *testing.T) *servers.RedisFault {
			return red.OutOfMemory(t)
		}),
		serverFault("READONLY", "REPLICAOF a master that never answers", func(t *testing.T) *servers.RedisFault {
			return red.ReplicaOfSilentMaster(t, true)
		}),
		serverFault("MASTERDOWN", "REPLICAOF a master that never answers, replica-serve-stale-data no", func(t *testing.T) *servers.RedisFault {
			return red.ReplicaOfSilentMaster(t, false)
		}),
		serverFault("BUSY", "EVAL spinning 1.5s, busy-reply-threshold 50ms", func(t *testing.T) *servers.RedisFault {
			return red.Busy(t, 1500*time.Millisecond)
		}),
		serverFault("LOADING", "DEBUG RELOAD, 8k keys, key-load-delay 100µs", func(t *testing.T) *servers.RedisFault {
			return red.Loading(t, 8000)
		}),
	}
}
