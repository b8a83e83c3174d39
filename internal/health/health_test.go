package health_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/health"
)

type observed struct {
	mu sync.Mutex
	up map[string]bool
}

func (o *observed) BackendChecked(backend string, up bool, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.up[backend] = up
}

// TestChecker: a round runs every check at once, a hung one bounded by the timeout without
// starving the others; the results, the observer and the changes follow each backend's state.
func TestChecker(t *testing.T) {
	var down atomic.Bool
	obs := &observed{up: map[string]bool{}}
	var changes []string
	c := health.NewChecker(map[string]health.Check{
		"hangs": func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
		"flaky": func(context.Context) error {
			if down.Load() {
				return errors.New("down")
			}
			return nil
		},
	}, health.Options{Timeout: 100 * time.Millisecond, Observer: obs, OnChange: func(r health.Result) {
		changes = append(changes, r.Backend+map[bool]string{true: " up", false: " down"}[r.Up])
	}})
	if c.Last() != nil {
		t.Fatal("Last before any round is not nil")
	}
	start := time.Now()
	res := c.Check(context.Background())
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a round with a hung check took %v, want about its 100ms bound", took)
	}
	if len(res) != 2 || res[0].Backend != "flaky" || !res[0].Up || res[1].Backend != "hangs" || res[1].Up {
		t.Fatalf("first round = %+v, want flaky up and hangs down", res)
	}
	down.Store(true)
	c.Check(context.Background())
	down.Store(false)
	c.Check(context.Background())
	if got, want := changes, []string{"hangs down", "flaky down", "flaky up"}; len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("changes = %v, want %v", got, want)
	}
	if !obs.up["flaky"] || obs.up["hangs"] {
		t.Errorf("observed %v, want flaky up, hangs down", obs.up)
	}
	if last := c.Last(); !last[0].Up {
		t.Errorf("Last = %+v, want flaky up", last)
	}
}
