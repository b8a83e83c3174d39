package dlock_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
)

// TestMain fails the run if a goroutine of dlock or go-redis is left when
// all tests are done: every test closes its Redis and dlock clients.
func TestMain(m *testing.M) {
	// The tests that cut Redis off would fill the output with dial errors.
	redis.SetLogger(quietLogger{})
	code := m.Run()
	if code == 0 {
		if leaks := leakedGoroutines(3 * time.Second); len(leaks) > 0 {
			fmt.Fprintf(os.Stderr, "leaked goroutines:\n\n%s\n", strings.Join(leaks, "\n\n"))
			code = 1
		}
	}
	os.Exit(code)
}

type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

// The suite runs against the single Redis at REDIS_ADDR, unless one of these
// variables switches its topology (topology_test.go sets them for child runs
// of the whole suite):
const (
	// clusterEnv names the seed nodes of a Redis Cluster, comma-separated:
	// newRedis returns a cluster client of it.
	clusterEnv = "DLOCK_TEST_CLUSTER_ADDRS"
	// redlockEnv set to 1 makes every Client a Redlock Client over its one
	// node (quorum 1), so every test runs the Redlock code path; the cases
	// that need several nodes are in redlock_test.go.
	redlockEnv = "DLOCK_TEST_REDLOCK"
)

// suiteNodeTimeout is ClientOptions.NodeTimeout in Redlock mode: the suite
// tests what the lock does, not how fast a loaded machine answers.
const suiteNodeTimeout = 250 * time.Millisecond

func clusterAddrs() []string {
	if v := os.Getenv(clusterEnv); v != "" {
		return strings.Split(v, ",")
	}
	return nil
}

// redisAddr returns REDIS_ADDR, skipping the test when it is not set, or
// when the suite runs on a cluster: only the tests that need one node (to
// put a TCP proxy in front of it) call it directly.
func redisAddr(t testing.TB) string {
	t.Helper()
	if clusterAddrs() != nil {
		t.Skip("needs a single Redis node; runs in the single-node suite")
	}
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		t.Skip("REDIS_ADDR is not set; dlock tests need a real Redis")
	}
	return addr
}

// newRedis returns a client of the suite's Redis, closed at cleanup.
func newRedis(t testing.TB) redis.UniversalClient {
	t.Helper()
	rdb := dialRedis(t)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// dialRedis returns a client of the suite's Redis (REDIS_ADDR, or the
// cluster), which the caller closes. It fails the test when Redis does not
// answer.
func dialRedis(t testing.TB) redis.UniversalClient {
	t.Helper()
	addrs := clusterAddrs()
	var rdb redis.UniversalClient
	if addrs != nil {
		rdb = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	} else {
		addrs = []string{redisAddr(t)}
		rdb = redis.NewClient(&redis.Options{Addr: addrs[0]})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		_ = rdb.Close()
		t.Fatalf("Redis at %v is unreachable: %v", addrs, err)
	}
	return rdb
}

// newRedisAt returns a client of the Redis at addr, closed at cleanup. tweak,
// if not nil, adjusts the options first.
func newRedisAt(t testing.TB, addr string, tweak func(*redis.Options)) *redis.Client {
	t.Helper()
	opt := &redis.Options{Addr: addr}
	if tweak != nil {
		tweak(opt)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatalf("Redis at %s (REDIS_ADDR) is unreachable: %v", addr, err)
	}
	return rdb
}

// newClient returns a dlock Client on rdb, closed at cleanup.
func newClient(t testing.TB, rdb redis.UniversalClient, opt *dlock.ClientOptions) *dlock.Client {
	t.Helper()
	c := newDlock(rdb, opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newDlock returns a dlock Client on rdb: a Redlock Client over rdb alone
// when DLOCK_TEST_REDLOCK is 1.
func newDlock(rdb redis.UniversalClient, opt *dlock.ClientOptions) *dlock.Client {
	if os.Getenv(redlockEnv) != "1" {
		return dlock.New(rdb, opt)
	}
	var o dlock.ClientOptions
	if opt != nil {
		o = *opt
	}
	if o.NodeTimeout == 0 {
		o.NodeTimeout = suiteNodeTimeout
	}
	return dlock.NewRedlock([]redis.UniversalClient{rdb}, &o)
}

// testKey returns a key unique to this test, so tests can run in parallel
// and next to other packages' tests on the same Redis. At cleanup it deletes
// the key and its companions.
func testKey(t testing.TB, rdb redis.UniversalClient, name string) string {
	t.Helper()
	id := rand.Text()[:12]
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		for _, k := range keysMatching(ctx, rdb, "*"+id+"*") {
			_ = rdb.Del(ctx, k).Err() // one by one: a cluster refuses cross-slot DEL
		}
	})
	return "dlocktest:" + id + ":" + name
}

// oneKey starts a parallel test of one key: it returns a client of the
// suite's Redis, a key of the test's own named name (see testKey) and a dlock
// Client on that Redis, all cleaned up when the test ends.
func oneKey(t *testing.T, name string) (redis.UniversalClient, string, *dlock.Client) {
	t.Helper()
	t.Parallel()
	rdb := newRedis(t)
	return rdb, testKey(t, rdb, name), newClient(t, rdb, nil)
}

// skipRedlockSuite skips a test of fair or read-write locks when the suite
// runs every Client as Redlock, which has neither (ErrFairRedlock,
// ErrRWRedlock).
func skipRedlockSuite(t testing.TB) {
	t.Helper()
	if os.Getenv(redlockEnv) == "1" {
		t.Skip("fair and read-write locks are not available under Redlock")
	}
}

// keysMatching returns the keys that match pattern, on every master of a
// cluster.
func keysMatching(ctx context.Context, rdb redis.UniversalClient, pattern string) []string {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		keys, _ := rdb.Keys(ctx, pattern).Result()
		return keys
	}
	var mu sync.Mutex
	var keys []string
	_ = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		found, err := node.Keys(ctx, pattern).Result()
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, found...)
		return err
	})
	return keys
}

// recorder is an Observer that counts events.
type recorder struct {
	dlock.NopObserver
	mu                                   sync.Mutex
	obtained, notObtained, contended     int
	renewed, renewFailed, lost, released int
	lostCauses                           []error
}

func (r *recorder) Obtained(string, time.Duration) { r.add(&r.obtained) }

func (r *recorder) NotObtained(string, time.Duration, error) { r.add(&r.notObtained) }

func (r *recorder) Contended(string) { r.add(&r.contended) }

func (r *recorder) Renewed(_ string, err error) {
	if err != nil {
		r.add(&r.renewFailed)
		return
	}
	r.add(&r.renewed)
}

func (r *recorder) Lost(_ string, cause error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost++
	r.lostCauses = append(r.lostCauses, cause)
}

func (r *recorder) Released(string, time.Duration, error) { r.add(&r.released) }

func (r *recorder) add(n *int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*n++
}

// count returns *n under the lock.
func (r *recorder) count(n *int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return *n
}
