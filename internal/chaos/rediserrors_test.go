//go:build linux

package chaos_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/testenv"
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
	skipShort(t)
	t.Parallel()
	// DEBUG (Redis 7 disables it by default) makes the LOADING fault: see loadingFault.
	red := servers.StartRedis(t, "--enable-debug-command", "yes")
	b := backend{dsn: testenv.Schema(t), redis: red.Addr, prefix: testenv.Name("chaos")}
	apis := b.startAPIs(t, 2, nil)
	e := newReplyEnv(t, apis, b.dsn)
	admin, prober := red.Client(), red.Client()
	probe := func(ctx context.Context) error { // a write script, as the lock and the gate run
		return prober.Eval(ctx, "return redis.call('SET', KEYS[1], ARGV[1])", []string{b.prefix + ":probe"}, 1).Err()
	}
	for _, f := range []replyFault{
		oomFault(admin), readOnlyFault(admin, false), readOnlyFault(admin, true),
		busyFault(red, admin), loadingFault(red, admin),
	} {
		f.probe = probe
		e.run(t, f)
	}
	e.finish(t)
}

// configSet sets Redis configuration parameters (name, value, ...), failing the test if it cannot.
func configSet(t *testing.T, rdb *redis.Client, nameValues ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i := 0; i+1 < len(nameValues); i += 2 {
		if err := rdb.ConfigSet(ctx, nameValues[i], nameValues[i+1]).Err(); err != nil {
			t.Fatalf("CONFIG SET %s %s: %v", nameValues[i], nameValues[i+1], err)
		}
	}
}

// do runs one command, failing the test if it fails.
func do(t *testing.T, rdb *redis.Client, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rdb.Do(ctx, args...).Err(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
}

// oomFault: maxmemory 1 byte under the noeviction policy: every write is refused with OOM,
// inside scripts too.
func oomFault(admin *redis.Client) replyFault {
	return replyFault{
		class: "OOM", how: "CONFIG SET maxmemory 1, policy noeviction",
		start: func(t *testing.T) (<-chan struct{}, *error) {
			configSet(t, admin, "maxmemory-policy", "noeviction", "maxmemory", "1")
			return nil, nil
		},
		lift: func(t *testing.T) { configSet(t, admin, "maxmemory", "0") },
	}
}

// readOnlyFault: the server becomes the replica of a master that never answers (a listener
// of the test's that accepts nothing, so no other server can take its port and be synced
// from): writes get READONLY, or with stale false everything gets MASTERDOWN. The replica
// keeps its data, since it never syncs.
func readOnlyFault(admin *redis.Client, masterDown bool) replyFault {
	f := replyFault{class: "READONLY", how: "REPLICAOF a master that never answers"}
	stale := "yes"
	if masterDown {
		f.class, f.how, stale = "MASTERDOWN", f.how+", replica-serve-stale-data no", "no"
	}
	var ln net.Listener
	f.start = func(t *testing.T) (<-chan struct{}, *error) {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		host, port, _ := net.SplitHostPort(ln.Addr().String())
		configSet(t, admin, "replica-serve-stale-data", stale)
		do(t, admin, "REPLICAOF", host, port)
		return nil, nil
	}
	f.lift = func(t *testing.T) {
		do(t, admin, "REPLICAOF", "NO", "ONE")
		configSet(t, admin, "replica-serve-stale-data", "yes")
		ln.Close()
	}
	return f
}

// busyFault: a script spins for 1.5s (a loop bounded in count and time) past a
// busy-reply-threshold of 50ms, so every other command gets BUSY until it returns.
func busyFault(red *servers.Redis, admin *redis.Client) replyFault {
	const spin = `local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
for i = 1, 100000000 do
	t = redis.call('TIME')
	if t[1] * 1000000 + t[2] - start >= tonumber(ARGV[1]) then return i end
end
return -1`
	return replyFault{
		class: "BUSY", how: "EVAL spinning 1.5s, busy-reply-threshold 50ms",
		start: func(t *testing.T) (<-chan struct{}, *error) {
			configSet(t, admin, "busy-reply-threshold", "50")
			return background(red, func(ctx context.Context, rdb *redis.Client) error {
				return rdb.Eval(ctx, spin, nil, (1500 * time.Millisecond).Microseconds()).Err()
			})
		},
		lift: func(t *testing.T) { configSet(t, admin, "busy-reply-threshold", "5000") },
	}
}

// loadingFault: DEBUG RELOAD saves the dataset and loads it again, with 8,000 filler keys
// (in database 9, away from the API's) and key-load-delay (a Redis 7 test setting: µs per
// key) making the load take a second or two; loading-process-events-interval-bytes makes the
// loading server answer other clients every KiB, with LOADING. Every key is kept, TTLs
// included. It is the same server process throughout: a restart with a dump to load would
// add a spell of refused connections to the fault.
func loadingFault(red *servers.Redis, admin *redis.Client) replyFault {
	return replyFault{
		class: "LOADING", how: "DEBUG RELOAD, 8k keys, key-load-delay 100µs",
		start: func(t *testing.T) (<-chan struct{}, *error) {
			ctx := context.Background()
			if v, _ := admin.ConfigGet(ctx, "key-load-delay").Result(); v["key-load-delay"] == "" {
				t.Fatal("this redis-server has no key-load-delay setting (Redis 7 has)")
			}
			filler := redis.NewClient(&redis.Options{Addr: red.Addr, DB: 9, MaxRetries: -1})
			defer filler.Close()
			do(t, filler, "DEBUG", "POPULATE", 8000, "filler")
			configSet(t, admin, "key-load-delay", "100", "loading-process-events-interval-bytes", "1024")
			return background(red, func(ctx context.Context, rdb *redis.Client) error {
				return rdb.Do(ctx, "DEBUG", "RELOAD").Err()
			})
		},
		lift: func(t *testing.T) { configSet(t, admin, "key-load-delay", "0") },
	}
}

// background runs a long command on a client of its own and returns a channel closed when
// it has returned, and its error, valid then.
func background(red *servers.Redis, f func(ctx context.Context, rdb *redis.Client) error) (<-chan struct{}, *error) {
	rdb := redis.NewClient(&redis.Options{Addr: red.Addr, MaxRetries: -1, ReadTimeout: 20 * time.Second})
	done, err := make(chan struct{}), new(error)
	go func() {
		defer close(done)
		defer rdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
		defer cancel()
		if *err = f(ctx, rdb); *err != nil {
			*err = fmt.Errorf("background command: %w", *err)
		}
	}()
	return done, err
}
