// Package health watches the backends an API process shares with the others (PostgreSQL,
// Redis, etcd) from the background: a Checker runs every check at once on a period and keeps
// the last results, for a dependency report and for gauges. A backend's state never decides
// whether the process is ready (docs/deployment.md, "Readiness").
package health

import (
	"context"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Check reports whether one backend answers. It must return once ctx is done.
type Check func(ctx context.Context) error

// Observer is told each check's result: internal/metrics implements it (seckill_backend_up).
type Observer interface {
	BackendChecked(backend string, up bool, took time.Duration)
}

// Result is one backend's state at its last check.
type Result struct {
	Backend string
	Up      bool
	Err     error // nil when Up; for the log only (it may hold addresses)
	Took    time.Duration
	At      time.Time
}

// Options tune a Checker; the zero value means the defaults.
type Options struct {
	Interval time.Duration // between the starts of two rounds; default 2s
	Timeout  time.Duration // bound of each check; default 2s
	Observer Observer      // nil: none
	// OnChange, when set, is called with a result whose Up differs from the backend's
	// previous one (and with the first result of a backend that is down).
	OnChange func(Result)
}

// Checker runs its checks in rounds. It is safe for concurrent use.
type Checker struct {
	checks map[string]Check
	names  []string
	opt    Options
	last   atomic.Pointer[[]Result] // sorted by Backend; nil before the first round
	mu     sync.Mutex               // serializes rounds
}

// NewChecker returns a Checker of checks, by backend name. No round has run yet.
func NewChecker(checks map[string]Check, opt Options) *Checker {
	if opt.Interval <= 0 {
		opt.Interval = 2 * time.Second
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 2 * time.Second
	}
	c := &Checker{checks: checks, opt: opt}
	for name := range checks {
		c.names = append(c.names, name)
	}
	sort.Strings(c.names)
	return c
}

// Check runs one round now: every check at once, each bounded by the timeout (so that one
// that hangs leaves the others their time), and returns the results by backend name.
func (c *Checker) Check(ctx context.Context) []Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	res := make([]Result, len(c.names))
	var wg sync.WaitGroup
	for i, name := range c.names {
		wg.Go(func() {
			start := time.Now()
			err := c.checks[name](ctx)
			res[i] = Result{Backend: name, Up: err == nil, Err: err, Took: time.Since(start), At: start}
		})
	}
	wg.Wait()
	prev := c.Last()
	for i, r := range res {
		if c.opt.Observer != nil {
			c.opt.Observer.BackendChecked(r.Backend, r.Up, r.Took)
		}
		changed := prev == nil && !r.Up || prev != nil && prev[i].Up != r.Up
		if changed && c.opt.OnChange != nil {
			c.opt.OnChange(r)
		}
	}
	c.last.Store(&res)
	return res
}

// Last returns the results of the last round, nil before the first.
func (c *Checker) Last() []Result {
	if p := c.last.Load(); p != nil {
		return *p
	}
	return nil
}

// Run runs a round every interval until ctx is done.
func (c *Checker) Run(ctx context.Context) {
	t := time.NewTicker(c.opt.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.Check(ctx)
		}
	}
}
