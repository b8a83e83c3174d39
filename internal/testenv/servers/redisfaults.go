package servers

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The faults a redis-server of a test's own can be made to answer with, for real: each makes
// the server reply with one class of error until the fault is lifted (or ends by itself).

// RedisFault is one fault made on a Redis. It is not safe for concurrent use.
type RedisFault struct {
	// Ended, for a fault that ends by itself, is closed once it has; Err then tells whether
	// the command behind it failed. Nil for a fault that lasts until Lift.
	Ended <-chan struct{}
	err   *error
	lift  func(t testing.TB)
}

// Err is the error of the command behind a fault that ends by itself, once Ended is closed.
func (f *RedisFault) Err() error {
	if f.err == nil {
		return nil
	}
	return *f.err
}

// Lift ends the fault: it undoes what made it, after waiting for a fault that ends by itself
// to end.
func (f *RedisFault) Lift(t testing.TB) {
	t.Helper()
	if f.Ended != nil {
		<-f.Ended
	}
	f.lift(t)
}

// ConfigSet sets configuration parameters (name, value, ...), failing the test if it cannot.
func (s *Redis) ConfigSet(t testing.TB, nameValues ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer rdb.Close()
	for i := 0; i+1 < len(nameValues); i += 2 {
		if err := rdb.ConfigSet(ctx, nameValues[i], nameValues[i+1]).Err(); err != nil {
			t.Fatalf("CONFIG SET %s %s on %s: %v", nameValues[i], nameValues[i+1], s.Addr, err)
		}
	}
}

// Do runs one command on database db, failing the test if it fails.
func (s *Redis) Do(t testing.TB, db int, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, DB: db, ContextTimeoutEnabled: true, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Do(ctx, args...).Err(); err != nil {
		t.Fatalf("%v on %s: %v", args, s.Addr, err)
	}
}

// OutOfMemory sets maxmemory to one byte under the noeviction policy: every write is refused
// with OOM, inside scripts too.
func (s *Redis) OutOfMemory(t testing.TB) *RedisFault {
	s.ConfigSet(t, "maxmemory-policy", "noeviction", "maxmemory", "1")
	return &RedisFault{lift: func(t testing.TB) { s.ConfigSet(t, "maxmemory", "0") }}
}

// ReplicaOfSilentMaster makes the server the replica of a master that never answers (a
// listener of the test's that accepts nothing, so that no other server can take its port and
// be synced from): writes get READONLY, or everything MASTERDOWN when serveStale is false.
// The replica keeps its data, since it never syncs.
func (s *Redis) ReplicaOfSilentMaster(t testing.TB, serveStale bool) *RedisFault {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	stale := map[bool]string{true: "yes", false: "no"}[serveStale]
	s.ConfigSet(t, "replica-serve-stale-data", stale)
	s.Do(t, 0, "REPLICAOF", host, port)
	return &RedisFault{lift: func(t testing.TB) {
		s.Do(t, 0, "REPLICAOF", "NO", "ONE")
		s.ConfigSet(t, "replica-serve-stale-data", "yes")
		ln.Close()
	}}
}

// spinScript runs for ARGV[1] µs of server time, in a loop bounded in count as well.
const spinScript = `local t = redis.call('TIME')
local start = t[1] * 1000000 + t[2]
for i = 1, 100000000 do
	t = redis.call('TIME')
	if t[1] * 1000000 + t[2] - start >= tonumber(ARGV[1]) then return i end
end
return -1`

// Busy runs a script that spins for d past a busy-reply-threshold of 50ms: every other
// command gets BUSY until it returns, which ends the fault.
func (s *Redis) Busy(t testing.TB, d time.Duration) *RedisFault {
	s.ConfigSet(t, "busy-reply-threshold", "50")
	f := s.background("EVAL", spinScript, 0, d.Microseconds())
	f.lift = func(t testing.TB) { s.ConfigSet(t, "busy-reply-threshold", "5000") }
	return f
}

// Loading makes the server load its dataset again (DEBUG RELOAD, which needs the server
// started with --enable-debug-command yes) with keys filler keys in database 9, away from the
// test's, and key-load-delay (a Redis 7 test setting: µs per key) at 100 µs, so that loading
// takes about keys/10,000 seconds; meanwhile other clients get LOADING (every KiB loaded,
// loading-process-events-interval-bytes). Every key is kept, TTLs included; the server process
// stays the same, so no spell of refused connections is mixed in.
func (s *Redis) Loading(t testing.TB, keys int) *RedisFault {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer rdb.Close()
	if v, _ := rdb.ConfigGet(ctx, "key-load-delay").Result(); v["key-load-delay"] == "" {
		t.Fatal("this redis-server has no key-load-delay setting (Redis 7 has)")
	}
	s.Do(t, 9, "DEBUG", "POPULATE", keys, "filler")
	s.ConfigSet(t, "key-load-delay", "100", "loading-process-events-interval-bytes", "1024")
	f := s.background("DEBUG", "RELOAD")
	f.lift = func(t testing.TB) { s.ConfigSet(t, "key-load-delay", "0") }
	return f
}

// background runs one long command on a connection of its own and returns a fault that ends
// when it returns.
func (s *Redis) background(args ...any) *RedisFault {
	done, err := make(chan struct{}), new(error)
	go func() {
		defer close(done)
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, ReadTimeout: 20 * time.Second})
		defer rdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
		defer cancel()
		if e := rdb.Do(ctx, args...).Err(); e != nil {
			*err = fmt.Errorf("%v: %w", args[0], e)
		}
	}()
	return &RedisFault{Ended: done, err: err}
}
