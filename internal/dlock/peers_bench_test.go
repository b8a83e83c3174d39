package dlock_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"

	"github.com/seckill/seckill/internal/dlock"
	"github.com/seckill/seckill/internal/testenv/lockbench"
)

// peer is one lock library, as one process would hold it: Obtain waits up to a minute for
// key and returns the lock's release.
type peer = lockbench.Lock

// peers returns dlock, bsm/redislock, go-redsync/redsync and redis/rueidis's rueidislock on
// rdb (rueidislock on a rueidis client of its own, to the same Redis), each retrying every
// millisecond (redislock's LinearBackoff(1ms), redsync's WithRetryDelay(1ms)) or woken by the
// release (dlock: a release notification, with polling at 2-64 ms; rueidislock: a client-side
// caching invalidation), with a 5 s lease, and dlock-cohort: dlock handing the lock to a
// waiter of its own Client up to peerCohort times in a row (ClientOptions.Cohort).
func peers(b *testing.B, rdb redis.UniversalClient) []peer {
	dl := newClient(b, rdb, nil)
	dc := newClient(b, rdb, &dlock.ClientOptions{Cohort: peerCohort})
	rl := redislock.New(rdb)
	rs := redsync.New(goredis.NewPool(rdb))
	const ttl = 5 * time.Second
	return []peer{
		{Name: "redislock", Obtain: func(ctx context.Context, key string) (func(context.Context) error, error) {
			// redislock bounds its retries by its context's deadline, a ttl from now when
			// the context has none (a timer per Obtain, as here).
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
		rueidisPeer(b, ttl),
		{Name: "dlock", Obtain: dlockObtain(dl, ttl)},
		{Name: "dlock-cohort", Obtain: dlockObtain(dc, ttl)},
	}
}

// rueidisPeer is rueidislock with one key (KeyMajority 1), on a rueidis client of its own.
// Two settings differ from what its README shows, both because the run hung without them:
// with NoLoopTracking (NOLOOP), 64 goroutines of one Locker missed wake-ups (a waiter is woken
// by an invalidation, and NOLOOP keeps from the connection those of its own deletes) and a
// contended round never finished; and its acquire call times out after TryNextAfter, 20 ms by
// default, which on this loaded machine left an uncontended Obtain waiting for a wake-up that
// never came (3 runs in 13, with NOLOOP). With 1 s and without NOLOOP, neither hung.
func rueidisPeer(b *testing.B, ttl time.Duration) peer {
	lk, err := rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption: rueidis.ClientOption{InitAddress: []string{redisAddr(b)}},
		KeyMajority:  1,
		KeyValidity:  ttl,
		TryNextAfter: time.Second,
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(lk.Close)
	return peer{Name: "rueidislock", Obtain: func(ctx context.Context, key string) (func(context.Context) error, error) {
		for {
			// A waiter that misses its invalidation waits until its context's deadline, or
			// else the key's validity (rueidis PR #669): with four Lockers on one key a
			// contended round ran past the bound's minute. A deadline per try bounds it.
			tctx, cancel := context.WithTimeout(ctx, rueidisTry)
			_, release, err := lk.WithContext(tctx, key)
			cancel()
			switch {
			case err == nil:
				return func(context.Context) error { release(); return nil }, nil // returns once the key is deleted
			case ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded):
				return nil, err
			}
		}
	}}
}

// rueidisTry bounds one try of rueidislock's WithContext (see rueidisPeer).
const rueidisTry = 250 * time.Millisecond

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
// for peerOps operations, the libraries taking turns (every 10 operations uncontended, see
// lockbench.Uncontended), so that the machine's drift hits all of them alike; the figures are
// the medians over the rounds.
const (
	peerRounds = 5
	peerOps    = 2000
	peerCohort = 8
)

// BenchmarkPeers compares dlock with bsm/redislock, go-redsync/redsync and rueidislock in one
// run (make bench-locks; run it with -benchtime 1x): an uncontended Obtain + Release, and 64
// goroutines handing one key around through 1 client of each library, or through 4 standing
// for four processes. It reports each library's median (us/op uncontended, handoffs/s
// contended) and dlock's ratio to each peer: uncontended, the median over the steps of the
// ratio of the times of 10 cycles each run back to back (Timing.Ratio; below 1 is faster);
// contended, the median over the rounds of the ratio of the rates (above 1 is faster). Each
// round is bounded (lockbench.Bound): a peer that hangs fails the run.
func BenchmarkPeers(b *testing.B) {
	b.Run("uncontended", func(b *testing.B) {
		rdb := newRedis(b)
		key := testKey(b, rdb, "peers")
		ps := peers(b, rdb)
		for b.Loop() {
			t := lockbench.UncontendedTiming(b, ps, key, peerRounds, peerOps, 0)
			reportRatios(b, ps, t.Ratio, t.Medians)
		}
		reportWork(b, rdb, ps, key)
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
				rs := lockbench.Measure(b, clients[0], peerRounds, "handoffs/s", func(p peer) float64 {
					j := slices.IndexFunc(clients[0], func(q peer) bool { return q.Name == p.Name })
					rate, wait := lockbench.HandoffsWait(b, clients, j, key, peerOps, 0)
					longest[p.Name] = max(longest[p.Name], wait)
					return rate
				})
				reportRatios(b, clients[0], rs.Ratio, rs.Medians)
			}
			for name, wait := range longest {
				b.ReportMetric(float64(wait.Microseconds())/1000, name+"-max-wait-ms")
			}
		})
	}
}

// reportRatios reports the ratio of dlock and dlock-cohort to each of the other libraries
// ("dlock/redislock"), and, for the record, the ratio of their medians ("dlock/redislock-med").
func reportRatios(b *testing.B, ps []peer, ratio func(a, b string) float64, med map[string]float64) {
	for _, ours := range []string{"dlock", "dlock-cohort"} {
		for _, p := range ps {
			if !strings.HasPrefix(p.Name, "dlock") {
				b.ReportMetric(ratio(ours, p.Name), ours+"/"+p.Name)
				b.ReportMetric(med[ours]/med[p.Name], ours+"/"+p.Name+"-med")
			}
		}
	}
}

// reportWork reports the work of one uncontended Obtain + Release of each peer, in two figures
// that do not move with the machine's state the way its time does: the heap allocations in
// this process ("<name>-allocs/op", testing.AllocsPerRun) and the time Redis spent running
// the commands the library sent ("<name>-redis-us/op": the median of peerRounds interleaved
// rounds), with dlock's ratios to redislock.
func reportWork(b *testing.B, rdb redis.UniversalClient, ps []peer, key string) {
	ctx, stop := lockbench.Bound(b, "the work of an uncontended cycle")
	defer stop()
	cycle := func(p peer) { lockbench.Cycle(ctx, b, p, key) }
	allocs := map[string]float64{}
	for _, p := range ps {
		allocs[p.Name] = testing.AllocsPerRun(peerOps, func() { cycle(p) })
		b.ReportMetric(allocs[p.Name], p.Name+"-allocs/op")
	}
	sent := &sentCommands{names: map[string]bool{}}
	rdb.AddHook(sent)
	usec := lockbench.Medians(b, ps, peerRounds, "redis-us/op", func(p peer) float64 {
		cycle(p) // learn the commands p sends
		names := sent.take()
		if p.Name == "rueidislock" { // its own client, which the hook does not see: two scripts
			names = map[string]bool{"evalsha": true, "eval": true}
		}
		before := commandUsec(b, rdb, names)
		for range peerOps {
			cycle(p)
		}
		return (commandUsec(b, rdb, names) - before) / peerOps
	})
	for _, ours := range []string{"dlock", "dlock-cohort"} {
		b.ReportMetric(allocs[ours]/allocs["redislock"], ours+"/redislock-allocs")
		b.ReportMetric(usec[ours]/usec["redislock"], ours+"/redislock-redis-us")
	}
}

// sentCommands is a go-redis hook that notes the names of the commands sent.
type sentCommands struct {
	mu    sync.Mutex
	names map[string]bool
}

func (h *sentCommands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *sentCommands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *sentCommands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.mu.Lock()
		h.names[cmd.Name()] = true
		h.mu.Unlock()
		return next(ctx, cmd)
	}
}

// take returns the names noted since the last take (but INFO's), and forgets them.
func (h *sentCommands) take() map[string]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	names := h.names
	h.names = map[string]bool{}
	delete(names, "info")
	return names
}

// commandUsec returns the microseconds Redis has spent in the named commands since its
// start, from INFO commandstats. Only commands a client sent are counted: the commands a
// script calls are counted there too, but their time is already the script's.
func commandUsec(b *testing.B, rdb redis.UniversalClient, names map[string]bool) float64 {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	var usec float64
	for line := range strings.Lines(info) {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !names[strings.TrimPrefix(name, "cmdstat_")] {
			continue
		}
		for field := range strings.SplitSeq(stats, ",") {
			if v, ok := strings.CutPrefix(field, "usec="); ok {
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					b.Fatalf("INFO commandstats: %q: %v", line, err)
				}
				usec += n
			}
		}
	}
	return usec
}
