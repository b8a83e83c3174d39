// Package lockbench measures locks one way for every benchmark that sets them side by side
// (internal/dlock's BenchmarkPeers, internal/etcdlock's BenchmarkBackends): each candidate
// measured in interleaved rounds, so that the swings of a shared machine hit them alike, and
// the medians reported; handoffs counted with 64 goroutines taking turns on one key. It
// imports only the standard library.
package lockbench

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Lock is one client of one lock: Obtain takes key and returns its release.
type Lock struct {
	Name   string
	Obtain func(ctx context.Context, key string) (release func(context.Context) error, err error)
}

// Medians measures each lock rounds times, interleaved, each round starting one lock further
// along, reports each median as the metric "<name>-<unit>", and returns the medians by name.
// Measured in a fixed order, the last lock was 10-30 % slower than the same lock measured first.
func Medians(b *testing.B, locks []Lock, rounds int, unit string, measure func(Lock) float64) map[string]float64 {
	return Measure(b, locks, rounds, unit, measure).Medians
}

// Rounds is what Measure measured: each lock's figure in every round.
type Rounds struct {
	Medians map[string]float64
	names   []string
	runs    [][]float64 // runs[j][r]: lock j's figure in round r
}

// Ratio returns the median over the rounds of a's figure over b's in the same round.
func (rs *Rounds) Ratio(a, b string) float64 {
	i, j := slices.Index(rs.names, a), slices.Index(rs.names, b)
	r := make([]float64, len(rs.runs[i]))
	for k := range r {
		r[k] = rs.runs[i][k] / rs.runs[j][k]
	}
	slices.Sort(r)
	return r[len(r)/2]
}

// Measure is Medians, also keeping each round's figures for Rounds.Ratio.
func Measure(b *testing.B, locks []Lock, rounds int, unit string, measure func(Lock) float64) *Rounds {
	rs := &Rounds{runs: make([][]float64, len(locks))}
	for r := range rounds {
		for k := range locks {
			j := (r + k) % len(locks)
			runtime.GC() // the garbage of the lock measured before is not this one's to collect
			rs.runs[j] = append(rs.runs[j], measure(locks[j]))
		}
	}
	for _, l := range locks {
		rs.names = append(rs.names, l.Name)
	}
	sorted := make([][]float64, len(locks))
	for j := range locks {
		sorted[j] = slices.Clone(rs.runs[j])
	}
	rs.Medians = report(b, locks, sorted, unit)
	return rs
}

// report reports the median of each lock's runs as the metric "<name>-<unit>" and returns
// the medians by name.
func report(b *testing.B, locks []Lock, runs [][]float64, unit string) map[string]float64 {
	med := map[string]float64{}
	for j, l := range locks {
		slices.Sort(runs[j])
		med[l.Name] = runs[j][len(runs[j])/2]
		b.ReportMetric(med[l.Name], l.Name+"-"+unit)
	}
	return med
}

// Uncontended times an uncontended Obtain + release of key by every lock, rounds rounds of ops
// cycles each (or as many as fit in window of its own time; 0: no bound), the locks taking turns
// every chunk cycles so that a swing of the machine hits them alike. It reports each lock's median
// in microseconds a cycle ("<name>-us/op") and returns the medians by name. See
// docs/dlock.md#benchmarks.
func Uncontended(b *testing.B, locks []Lock, key string, rounds, ops int, window time.Duration) map[string]float64 {
	return UncontendedTiming(b, locks, key, rounds, ops, window).Medians
}

// Timing is what UncontendedTiming measured.
type Timing struct {
	Medians map[string]float64 // each lock's median over the rounds, in microseconds a cycle
	names   []string
	steps   [][]float64 // steps[s][j]: lock j's microseconds a cycle in step s; 0 if it did not run
}

// Ratio returns the median, over the steps in which both ran, of a's time a cycle over b's in the
// same step, so that a swing of the machine weighs on both alike (docs/dlock.md#benchmarks, paired
// ratios).
func (t *Timing) Ratio(a, b string) float64 {
	i, j := slices.Index(t.names, a), slices.Index(t.names, b)
	var r []float64
	for _, st := range t.steps {
		if st[i] > 0 && st[j] > 0 {
			r = append(r, st[i]/st[j])
		}
	}
	if len(r) == 0 {
		return 0
	}
	slices.Sort(r)
	return r[len(r)/2]
}

// UncontendedTiming is Uncontended, also keeping each step's times for Timing.Ratio. Each
// round is bounded (see Bound).
func UncontendedTiming(b *testing.B, locks []Lock, key string, rounds, ops int, window time.Duration) *Timing {
	const chunk = 10
	t := &Timing{}
	runs := make([][]float64, len(locks))
	for _, l := range locks {
		t.names = append(t.names, l.Name)
	}
	for range rounds {
		runtime.GC()
		ctx, stop := Bound(b, "an uncontended round")
		spent := make([]time.Duration, len(locks))
		done := make([]int, len(locks))
		for step, busy := 0, true; busy; step++ {
			busy = false
			st := make([]float64, len(locks))
			for k := range locks {
				j := (step + k) % len(locks)
				if done[j] >= ops || (window > 0 && spent[j] >= window) {
					continue
				}
				busy = true
				n := min(chunk, ops-done[j])
				start := time.Now()
				for range n {
					cycle(ctx, b, locks[j], key)
				}
				d := time.Since(start)
				spent[j] += d
				done[j] += n
				st[j] = float64(d.Microseconds()) / float64(n)
			}
			if busy {
				t.steps = append(t.steps, st)
			}
		}
		stop()
		for j := range locks {
			runs[j] = append(runs[j], float64(spent[j].Microseconds())/float64(done[j]))
		}
	}
	t.Medians = report(b, locks, runs, "us/op")
	return t
}

// Cycle obtains key with l and releases it, on ctx (a round's, see Bound), failing the
// benchmark on an error.
func Cycle(ctx context.Context, b *testing.B, l Lock, key string) { cycle(ctx, b, l, key) }

func cycle(ctx context.Context, b *testing.B, l Lock, key string) {
	release, err := l.Obtain(ctx, key)
	if err != nil {
		b.Fatal(l.Name, err, context.Cause(ctx))
	}
	if err := release(ctx); err != nil {
		b.Fatal(l.Name, err, context.Cause(ctx))
	}
}

// Handoffs has 64 goroutines, spread over clients[i][j] (lock j's client i, each standing for
// a process), take turns on key for ops acquisitions in all, or until window has passed
// (0: no bound; the waits still going then are cancelled), and returns acquisitions per
// second.
func Handoffs(b *testing.B, clients [][]Lock, j int, key string, ops int64, window time.Duration) float64 {
	rate, _ := HandoffsWait(b, clients, j, key, ops, window)
	return rate
}

// HandoffsWait is Handoffs that also returns the longest wait of one Obtain: how long the
// unluckiest waiter, of any client, was kept from the key.
//
// An Obtain or a release that fails spends its turn, is counted and logged, and the goroutine
// goes on: a store that times out now and then under this load (a three-member etcd on a busy
// 2-core machine) is a result, not a broken benchmark. More failures than maxFailures of ops
// fail the benchmark.
func HandoffsWait(b *testing.B, clients [][]Lock, j int, key string, ops int64, window time.Duration) (float64, time.Duration) {
	var (
		left, done atomic.Int64
		longest    atomic.Int64 // ns
		wg         sync.WaitGroup
		failures   failures
	)
	ctx, stop := Bound(b, "a contended round of "+clients[0][j].Name)
	defer stop()
	cancel := context.CancelFunc(func() {})
	if window > 0 {
		ctx, cancel = context.WithTimeout(ctx, window)
	}
	defer cancel()
	left.Store(ops)
	start := time.Now()
	for i := range 64 {
		wg.Go(func() {
			l := clients[i%len(clients)][j]
			for left.Add(-1) >= 0 {
				asked := time.Now()
				release, err := l.Obtain(ctx, key)
				for w := int64(time.Since(asked)); ; {
					if old := longest.Load(); w <= old || longest.CompareAndSwap(old, w) {
						break
					}
				}
				if ctx.Err() != nil && err != nil { // the window or the bound ended during the wait
					return
				}
				if err != nil {
					failures.add(l.Name, "obtain", err)
					continue
				}
				if err := release(context.Background()); err != nil {
					failures.add(l.Name, "release", err)
					continue
				}
				done.Add(1)
			}
		})
	}
	wg.Wait()
	if cause := context.Cause(ctx); errors.Is(cause, errBound) {
		b.Fatalf("%s: %v", clients[0][j].Name, cause)
	}
	failures.report(b, ops)
	return float64(done.Load()) / time.Since(start).Seconds(), time.Duration(longest.Load())
}

// maxFailures is the share of a run's operations that may fail before the benchmark does.
const maxFailures = 0.01

// failures counts the failed operations of one run and keeps the first.
type failures struct {
	mu    sync.Mutex
	n     int64
	first string
}

func (f *failures) add(name, op string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n++; f.n == 1 {
		f.first = name + " " + op + ": " + err.Error()
	}
}

// report logs the failures of a run of ops operations, and fails b if they were more than
// maxFailures of them.
func (f *failures) report(b *testing.B, ops int64) {
	switch {
	case f.n == 0:
	case float64(f.n) > maxFailures*float64(ops):
		b.Errorf("%d of %d operations failed (more than %.0f %%), the first: %s", f.n, ops, 100*maxFailures, f.first)
	default:
		b.Logf("%d of %d operations failed and spent their turn, the first: %s", f.n, ops, f.first)
	}
}
