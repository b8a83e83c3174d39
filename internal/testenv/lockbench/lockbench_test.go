package lockbench

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// flaky is an in-process lock whose Obtain fails once every `every` calls, as a store that
// times out now and then does.
func flaky(every int64) Lock {
	var mu sync.Mutex
	var calls atomic.Int64
	return Lock{Name: "flaky", Obtain: func(context.Context, string) (func(context.Context) error, error) {
		if calls.Add(1)%every == 0 {
			return nil, errors.New("request timed out")
		}
		mu.Lock()
		return func(context.Context) error { mu.Unlock(); return nil }, nil
	}}
}

// TestHandoffsToleratesRareFailures: a failure now and then spends a turn and the run goes
// on; more than maxFailures of the operations fail the benchmark.
func TestHandoffsToleratesRareFailures(t *testing.T) {
	for _, c := range []struct {
		every int64
		fails bool
	}{{every: 1000, fails: false}, {every: 10, fails: true}} {
		var rate float64
		res := testing.Benchmark(func(b *testing.B) {
			rate = Handoffs(b, [][]Lock{{flaky(c.every)}}, 0, "k", 4000, 0)
		})
		if failed := res.N == 0; failed != c.fails {
			t.Errorf("one failure in %d: benchmark failed %v, want %v", c.every, failed, c.fails)
		}
		if !c.fails && rate <= 0 {
			t.Errorf("one failure in %d: %f handoffs/s", c.every, rate)
		}
	}
}

// TestUncontendedTakesTurns: the locks run 10 cycles each in turn, each step starting one
// lock further along, until each has done its operations or spent its window.
func TestUncontendedTakesTurns(t *testing.T) {
	var order []string
	var mu sync.Mutex
	lock := func(name string, pause time.Duration) Lock {
		return Lock{Name: name, Obtain: func(context.Context, string) (func(context.Context) error, error) {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			time.Sleep(pause)
			return func(context.Context) error { return nil }, nil
		}}
	}
	var med map[string]float64
	testing.Benchmark(func(b *testing.B) {
		order = nil
		med = Uncontended(b, []Lock{lock("a", 0), lock("b", 0)}, "k", 1, 25, 0)
	})
	var runs []string // "a10" for 10 cycles of a in a row
	for i := 0; i < len(order); {
		j := i
		for j < len(order) && order[j] == order[i] {
			j++
		}
		runs = append(runs, order[i]+strconv.Itoa(j-i))
		i = j
	}
	// a10 b10, then b first: b10 a10, then a5 b5; b's turn and the next a's merge.
	if want := []string{"a10", "b20", "a15", "b5"}; !slices.Equal(runs, want) {
		t.Errorf("turns %v, want %v", runs, want)
	}
	if len(med) != 2 {
		t.Errorf("medians %v, want a and b", med)
	}

	testing.Benchmark(func(b *testing.B) {
		order = nil
		med = Uncontended(b, []Lock{lock("fast", 0), lock("slow", time.Millisecond)}, "k", 1, 1000, 50*time.Millisecond)
	})
	slow := 0
	for _, name := range order {
		if name == "slow" {
			slow++
		}
	}
	if slow < 10 || slow > 100 {
		t.Errorf("slow lock ran %d cycles in a 50 ms window at 1 ms each", slow)
	}
	if med["slow"] < 1000 {
		t.Errorf("slow lock measured %.0f us a cycle, want at least 1000", med["slow"])
	}
}

// pausing is a lock whose Obtain pauses for pause, or until ctx ends when pause is 0.
func pausing(name string, pause time.Duration) Lock {
	return Lock{Name: name, Obtain: func(ctx context.Context, _ string) (func(context.Context) error, error) {
		if pause == 0 {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		time.Sleep(pause)
		return func(context.Context) error { return nil }, nil
	}}
}

// TestRatioPairsSteps: Timing.Ratio is the median of the two locks' times in the same steps:
// a lock that pauses 2 ms a cycle against one that pauses 4 ms comes out about half.
func TestRatioPairsSteps(t *testing.T) {
	var tm *Timing
	testing.Benchmark(func(b *testing.B) {
		tm = UncontendedTiming(b, []Lock{pausing("a", 2*time.Millisecond), pausing("b", 4*time.Millisecond)}, "k", 1, 50, 0)
	})
	if r := tm.Ratio("a", "b"); r < 0.3 || r > 0.8 {
		t.Errorf("Ratio(a, b) = %.2f for pauses of 2 and 4 ms, want about 0.5", r)
	}
	if r := tm.Ratio("b", "a"); r < 1.25 || r > 3.5 {
		t.Errorf("Ratio(b, a) = %.2f, want about 2", r)
	}
}

// TestBoundFailsAHungLock: a lock that never obtains fails the round at RoundLimit, in the
// uncontended and in the contended benchmark, instead of stalling it.
func TestBoundFailsAHungLock(t *testing.T) {
	defer func(d time.Duration) { RoundLimit = d }(RoundLimit)
	RoundLimit = 200 * time.Millisecond
	for name, run := range map[string]func(b *testing.B){
		"uncontended": func(b *testing.B) { Uncontended(b, []Lock{pausing("hung", 0)}, "k", 1, 10, 0) },
		"contended":   func(b *testing.B) { Handoffs(b, [][]Lock{{pausing("hung", 0)}}, 0, "k", 100, 0) },
	} {
		start := time.Now()
		res := testing.Benchmark(run)
		if res.N != 0 {
			t.Errorf("%s: a hung lock passed the benchmark", name)
		}
		if took := time.Since(start); took > 20*time.Second {
			t.Errorf("%s: the hung round took %v, want about its bound", name, took)
		}
	}
}
