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

// redisAddr returns REDIS_ADDR, skipping the test when it is not set.
func redisAddr(t testing.TB) string {
	t.Helper()
	addr := os.Getenv("REDIS_ADDR")
	if addr == "" {
		t.Skip("REDIS_ADDR is not set; dlock tests need a real Redis")
	}
	return addr
}

// newRedis returns a client of the Redis at REDIS_ADDR, closed at cleanup.
// It fails the test when REDIS_ADDR is set but Redis does not answer.
func newRedis(t testing.TB) *redis.Client {
	t.Helper()
	return newRedisAt(t, redisAddr(t), nil)
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
	c := dlock.NewWithOptions(rdb, opt)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// testKey returns a key unique to this test, so tests can run in parallel
// and next to other packages' tests on the same Redis. At cleanup it deletes
// the key and its companions.
func testKey(t testing.TB, rdb *redis.Client, name string) string {
	t.Helper()
	id := rand.Text()[:12]
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		keys, err := rdb.Keys(ctx, "*"+id+"*").Result()
		if err == nil && len(keys) > 0 {
			_ = rdb.Del(ctx, keys...).Err()
		}
	})
	return "dlocktest:" + id + ":" + name
}

// waitDone waits up to limit for ctx to end and returns how long it took, or
// fails the test.
func waitDone(t *testing.T, ctx context.Context, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-ctx.Done():
		return time.Since(start)
	case <-time.After(limit):
		t.Fatalf("context still not done after %v", limit)
		return 0
	}
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
