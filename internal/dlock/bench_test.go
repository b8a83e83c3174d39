package dlock_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
)

// A loopback round trip on this VM costs 35 to 130 µs depending on whether
// the vCPUs are awake, so the uncontended benchmarks time a PING right after
// every op (their ns/op leaves it out) and report the op's cost in round
// trips (rtts/op). A Redis lock needs at least 2 per Obtain+Release, and 2
// per handoff: compare BenchmarkContended with BenchmarkObtainRelease.

// BenchmarkPing is the floor: one Redis round trip on this machine.
func BenchmarkPing(b *testing.B) {
	ctx := context.Background()
	rdb := newRedis(b)
	for b.Loop() {
		if err := rdb.Ping(ctx).Err(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBareScripts runs the acquire and release scripts directly, with a
// fixed token: the floor of Obtain+Release once the Lua work is counted.
func BenchmarkBareScripts(b *testing.B) {
	ctx := context.Background()
	rdb := newRedis(b)
	key := testKey(b, rdb, "bare")
	keys := []string{key, dlock.ReleaseChannel(key), dlock.FenceKey(key)}
	benchWithFloor(b, rdb, func() error {
		if err := dlock.AcquireScript.Run(ctx, rdb, keys, "token", 1000).Err(); err != nil {
			return err
		}
		return dlock.ReleaseScript.Run(ctx, rdb, keys[:2], "token").Err()
	})
}

// BenchmarkObtainRelease is one uncontended Obtain and Release.
func BenchmarkObtainRelease(b *testing.B) {
	rdb := newRedis(b)
	benchObtainRelease(b, rdb, newClient(b, rdb, nil), testKey(b, rdb, "bench"))
}

// benchObtainRelease is benchWithFloor of one uncontended Obtain and Release
// of key on c, with PINGs to floor.
func benchObtainRelease(b *testing.B, floor redis.UniversalClient, c *dlock.Client, key string) {
	ctx := context.Background()
	benchWithFloor(b, floor, func() error {
		l, err := c.Obtain(ctx, key, time.Second, nil)
		if err != nil {
			return err
		}
		return l.Release(ctx)
	})
}

// benchWithFloor runs op b.N times, each followed by a timed PING, and
// reports op's mean time as ns/op, the PING's as rtt-us, and their ratio.
func benchWithFloor(b *testing.B, rdb redis.UniversalClient, op func() error) {
	ctx := context.Background()
	var opTime, pingTime time.Duration
	for b.Loop() {
		start := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := rdb.Ping(ctx).Err(); err != nil {
			b.Fatal(err)
		}
		opTime += mid.Sub(start)
		pingTime += time.Since(mid)
	}
	b.ReportMetric(float64(opTime)/float64(b.N), "ns/op")
	b.ReportMetric(float64(pingTime)/float64(b.N)/1e3, "rtt-us")
	b.ReportMetric(float64(opTime)/float64(pingTime), "rtts/op")
}

// BenchmarkContended has 64 goroutines take turns on one key, spread over 1
// Client (one process) or 4 (four processes, woken by pub/sub). One op is one
// handoff; handoff latency runs from the start of a Release to the return of
// the next holder's Obtain.
func BenchmarkContended(b *testing.B) {
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) { benchContended(b, n, (*dlock.Client).Obtain) })
	}
}

// BenchmarkContendedFair is BenchmarkContended with ObtainFair: every waiter asks Redis and
// keeps its place in the key's queue, instead of queueing behind its Client's first waiter.
func BenchmarkContendedFair(b *testing.B) {
	skipRedlockSuite(b)
	for _, n := range []int{1, 4} {
		b.Run(fmt.Sprintf("clients=%d", n), func(b *testing.B) { benchContended(b, n, (*dlock.Client).ObtainFair) })
	}
}

// obtainFunc is Client.Obtain or Client.ObtainFair.
type obtainFunc func(c *dlock.Client, ctx context.Context, key string, ttl time.Duration, opt *dlock.Options) (*dlock.Lock, error)

func benchContended(b *testing.B, nclients int, obtain obtainFunc) {
	rdb := newRedis(b)
	key := testKey(b, rdb, "hot")
	clients := make([]*dlock.Client, nclients)
	for i := range clients {
		clients[i] = newClient(b, rdb, nil)
	}
	benchHandoffs(b, clients, key, obtain)
}

// benchHandoffs has 64 goroutines, spread over clients, take turns on key.
func benchHandoffs(b *testing.B, clients []*dlock.Client, key string, obtain obtainFunc) {
	ctx := context.Background()
	var (
		released  atomic.Int64 // ns since base when the last Release began
		handoffs  atomic.Int64
		handoffNs atomic.Int64
		base      = time.Now()
	)
	opt := &dlock.Options{Wait: time.Minute}
	spreadOps(b, 64, func(g int) error {
		l, err := obtain(clients[g%len(clients)], ctx, key, 5*time.Second, opt)
		if err != nil {
			return err
		}
		if r := released.Load(); r != 0 {
			handoffs.Add(1)
			handoffNs.Add(int64(time.Since(base)) - r)
		}
		released.Store(int64(time.Since(base)))
		return l.Release(ctx)
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "handoffs/s")
	if n := handoffs.Load(); n > 0 {
		b.ReportMetric(float64(handoffNs.Load())/float64(n)/1e6, "ms/handoff")
	}
}

// spreadOps runs op b.N times in all, spread over n goroutines (op is given
// the index of the one that runs it), between b.ResetTimer and b.StopTimer. A
// goroutine stops at op's first error, which fails the benchmark.
func spreadOps(b *testing.B, n int, op func(g int) error) {
	var left atomic.Int64
	left.Store(int64(b.N))
	var wg sync.WaitGroup
	b.ResetTimer()
	for g := range n {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := op(g); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
}

// BenchmarkObtainMulti is one uncontended ObtainMulti and Release of 1, 3 and 10 keys: a
// round trip per key to take it and one to release it.
func BenchmarkObtainMulti(b *testing.B) {
	for _, n := range []int{1, 3, 10} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			ctx := context.Background()
			rdb := newRedis(b)
			c := newClient(b, rdb, nil)
			base := testKey(b, rdb, "multi")
			keys := make([]string, n)
			for i := range keys {
				keys[i] = fmt.Sprintf("%s:%d", base, i)
			}
			benchWithFloor(b, rdb, func() error {
				m, err := c.ObtainMulti(ctx, keys, time.Second, nil)
				if err != nil {
					return err
				}
				return m.Release(ctx)
			})
		})
	}
}

// BenchmarkRWReaders has 1, 8 or 64 goroutines of one Client take and release a read lock of
// one key in a loop: readers do not exclude each other, so the rate grows with them until
// Redis or the client saturates. One op is one RLock + Release.
func BenchmarkRWReaders(b *testing.B) {
	skipRedlockSuite(b)
	for _, n := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("readers=%d", n), func(b *testing.B) {
			ctx := context.Background()
			rdb := newRedis(b)
			m := newClient(b, rdb, nil).RW(testKey(b, rdb, "rw"))
			spreadOps(b, n, func(int) error {
				l, err := m.RLock(ctx, 5*time.Second, &dlock.Options{Wait: time.Minute})
				if err != nil {
					return err
				}
				return l.Release(ctx)
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "locks/s")
		})
	}
}
