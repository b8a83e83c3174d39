package dlock_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv/lockbench"
)

// peer is one lock library, as one process would hold it: Obtain waits up to a minute for
// key and returns the lock's release.
type peer = lockbench.Lock

// peers returns dlock, bsm/redislock and go-redsync/redsync on rdb, each retrying every
// millisecond (redislock's LinearBackoff(1ms), redsync's WithRetryDelay(1ms); dlock polls
// 2-64 ms and is woken by its release notification), with a 5 s lease, and dlock-cohort:
// dlock handing the lock to a waiter of its own Client up to peerCohort times in a row
// (ClientOptions.Cohort).
func peers(b *testing.B, rdb redis.UniversalClient) []peer {
	dl := newClient(b, rdb, nil)
	dc := newClient(b, rdb, &dlock.ClientOptions{Cohort: peerCohort})
	rl := redislock.New(rdb)
	rs := redsync.New(goredis.NewPool(rdb))
	const ttl = 5 * time.Second
	return []peer{
		{Name: "redislock", Obtain: func(ctx context.Context, key string) (func(context.Context) error, error) {
			ctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			l, err := rl.Obtain(ctx, key, ttl, &redislock.Options{RetryStrategy: redislock.LinearBackoff(time.Millisecond)})
			if err != nil {
				return nil, err
			}
			return l.Release, nil
		}},
		{Name: "redsync", Obtain: func(ctx context.Context, key string) (func(context.Context) error, error) {
			m := rs.NewMutex(key, redsync.WithExpiry(ttl), redsync.WithTries(1<<20), redsync.WithRetryDelay(time.Millisecond))
			if err := m.LockContext(ctx); err != nil {
				return nil, err
			}
			return func(ctx context.Context) error { _, err := m.UnlockContext(ctx); return err }, nil
		}},
		{Name: "dlock", Obtain: dlockObtain(dl, ttl)},
		{Name: "dlock-cohort", Obtain: dlockObtain(dc, ttl)},
	}
}

// dlockObtain is a peer's Obtain on c.
func dlockObtain(c *dlock.Client, ttl time.Duration) func(context.Context, string) (func(context.Context) error, error) {
	return func(ctx context.Context, key string) (func(context.Context) error, error) {
		l, err := c.Obtain(ctx, key, ttl, &dlock.Options{Wait: time.Minute})
		if err != nil {
			return nil, err
		}
		return l.Release, nil
	}
}

// peerRounds and peerOps: each measurement is peerRounds rounds, each running every library
// in turn for peerOps operations, so that the machine's drift hits all three alike; the
// figures are the medians over the rounds.
const (
	peerRounds = 5
	peerOps    = 2000
	peerCohort = 8
)

// BenchmarkPeers compares dlock with bsm/redislock and go-redsync/redsync in one run (make
// bench-locks; run it with -benchtime 1x): an uncontended Obtain + Release, and 64 goroutines
// handing one key around through 1 client of each library, or through 4 standing for four
// processes. It reports each library's median (us/op uncontended, handoffs/s contended) and
// dlock's ratio to each peer (below 1 is faster uncontended; above 1 is faster contended).
func BenchmarkPeers(b *testing.B) {
	b.Run("uncontended", func(b *testing.B) {
		rdb := newRedis(b)
		key := testKey(b, rdb, "peers")
		ps := peers(b, rdb)
		for b.Loop() {
			reportPeers(b, ps, "us/op", func(p peer) float64 {
				start := time.Now()
				for range peerOps {
					release, err := p.Obtain(context.Background(), key)
					if err != nil {
						b.Fatal(p.Name, err)
					}
					if err := release(context.Background()); err != nil {
						b.Fatal(p.Name, err)
					}
				}
				return float64(time.Since(start).Microseconds()) / peerOps
			})
		}
	})
	for _, n := range []int{1, 4} {
		b.Run("contended/clients="+strconv.Itoa(n), func(b *testing.B) {
			rdb := newRedis(b)
			key := testKey(b, rdb, "peers")
			clients := make([][]peer, n) // clients[i][j]: library j's i-th client
			for i := range clients {
				clients[i] = peers(b, rdb)
			}
			longest := map[string]time.Duration{} // each library's longest wait over the rounds
			for b.Loop() {
				reportPeers(b, clients[0], "handoffs/s", func(p peer) float64 {
					j := slices.IndexFunc(clients[0], func(q peer) bool { return q.Name == p.Name })
					rate, wait := lockbench.HandoffsWait(b, clients, j, key, peerOps, 0)
					longest[p.Name] = max(longest[p.Name], wait)
					return rate
				})
			}
			for name, wait := range longest {
				b.ReportMetric(float64(wait.Microseconds())/1000, name+"-max-wait-ms")
			}
		})
	}
}

// reportPeers measures each peer peerRounds times, interleaved, and reports the medians in
// unit and the ratio of dlock and dlock-cohort to each of the other libraries.
func reportPeers(b *testing.B, ps []peer, unit string, measure func(peer) float64) {
	med := lockbench.Medians(b, ps, peerRounds, unit, measure)
	for _, ours := range []string{"dlock", "dlock-cohort"} {
		for _, p := range ps {
			if !strings.HasPrefix(p.Name, "dlock") {
				b.ReportMetric(med[ours]/med[p.Name], ours+"/"+p.Name)
			}
		}
	}
}
