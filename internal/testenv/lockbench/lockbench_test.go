package lockbench

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
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
