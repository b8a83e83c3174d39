//go:build linux

package chaos_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/testenv"
)

// The fault phases of TestRedisErrorReplies and TestRedisErrorRepliesCluster: Redis answers
// one class of error reply at a time while a dlock and a redis product are on sale.

// replyFault makes a Redis server answer one class of error reply.
type replyFault struct {
	class string // the reply's first word, e.g. "OOM"
	how   string // how the fault is made, for the log
	// start makes the fault. If it ends by itself, start returns a channel closed when it
	// has, and a function giving the error that ended it, valid then; otherwise lift ends it.
	start func(t *testing.T) (ended <-chan struct{}, err func() error)
	lift  func(t *testing.T)              // ends the fault, or restores settings once it ended
	probe func(ctx context.Context) error // a call that fails with the class during the fault
}

// replyEnv is a dlock and a redis sale through API processes whose Redis the test makes
// answer error replies.
type replyEnv struct {
	apis  []*apiProc
	sales []*sale
	log   func(format string, args ...any)
}

// newReplyEnv puts a dlock and a redis product on sale through apis and sells a few units
// of each, so that the lock's fence key and the gate exist before the first fault.
func newReplyEnv(t *testing.T, apis []*apiProc, dsn string) *replyEnv {
	t.Helper()
	e := &replyEnv{apis: apis, log: timeline(t)}
	for _, strategy := range []string{"dlock", "redis"} {
		s := newSale(t, apis[0], dsn, product{strategy: strategy, stock: 30})
		s.start(4, apis...)
		s.waitBought(t, 5)
		s.stopAll()
		e.sales = append(e.sales, s)
	}
	e.log("selling; %d + %d sold", e.sales[0].bought.Load(), e.sales[1].bought.Load())
	return e
}

// faultAnswers is how many answers per sale and API a fault phase waits for.
const faultAnswers = 3

// run makes fault f, buys through every API of e until each sale has faultAnswers 5xx
// answers from each (or until f ends by itself), lifts f, waits until the APIs are ready,
// and checks the answers given meanwhile.
func (e *replyEnv) run(t *testing.T, f replyFault) {
	t.Helper()
	// No purchase straddles the onset: a redis-strategy buyer admitted by the gate just before
	// it could not be confirmed in the gate after COMMIT, which logs an ERROR. Faults that
	// do not end by themselves are lifted with the load halted too (a reshard moves keys).
	e.halt()
	start := time.Now()
	ended, endErr := f.start(t)
	reply := e.waitReply(t, f)
	for _, s := range e.sales {
		s.start(2, e.apis...)
	}
	if ended == nil {
		testenv.Eventually(t, 20*time.Second, f.class+" answers from every API", func() bool { return e.faulted(start) })
		e.halt()
		f.lift(t)
	} else {
		select {
		case <-ended:
		case <-time.After(30 * time.Second):
			t.Fatalf("%s fault did not end within 30s", f.class)
		}
		e.halt()
		if err := endErr(); err != nil {
			t.Fatalf("%s fault: %v", f.class, err)
		}
		if !e.faulted(start) {
			t.Errorf("%s fault ended before every API answered %d purchases of each product with a 5xx: make it longer", f.class, faultAnswers)
		}
		f.lift(t)
	}
	lifted := time.Now()
	for _, p := range e.apis {
		p.WaitReady("/readyz")
	}
	e.log("%s (%s) for %.1fs, ready again %.1fs later; the server said %q", f.class, f.how,
		lifted.Sub(start).Seconds(), time.Since(lifted).Seconds(), reply)
	for _, s := range e.sales {
		e.check(t, f.class, s, start)
	}
}

// waitReply waits until f's probe fails with f's class and returns the reply.
func (e *replyEnv) waitReply(t *testing.T, f replyFault) string {
	t.Helper()
	var last error
	testenv.Eventually(t, 10*time.Second, "the server to answer "+f.class, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		last = f.probe(ctx)
		if last == nil || !strings.HasPrefix(last.Error(), f.class+" ") {
			time.Sleep(10 * time.Millisecond)
			return false
		}
		return true
	})
	return last.Error()
}

// faulted reports whether every API answered faultAnswers purchases of each product sent
// since start with a 5xx.
func (e *replyEnv) faulted(start time.Time) bool {
	for _, s := range e.sales {
		n := map[string]int{}
		for _, a := range s.since(start) {
			if a.status >= 500 {
				n[a.target]++
			}
		}
		for _, p := range e.apis {
			if n[p.Name] < faultAnswers {
				return false
			}
		}
	}
	return true
}

// halt stops the load and waits for the answers in flight.
func (e *replyEnv) halt() {
	for _, s := range e.sales {
		s.stopAll()
	}
}

// check asserts the answers to s's purchases sent since start: no 5xx but 503 busy or
// unavailable with Retry-After, 503 unavailable from every API, and 503s given promptly. It
// logs them with the median and slowest time a 503 took.
func (e *replyEnv) check(t *testing.T, class string, s *sale, start time.Time) {
	t.Helper()
	n, took, from := map[string]int{}, []time.Duration{}, map[string]int{}
	for _, a := range s.since(start) {
		n[a.outcome()]++
		switch {
		case a.status == http.StatusServiceUnavailable && (a.code == api.CodeUnavailable || a.code == api.CodeBusy) && a.retryAfter != "":
			took = append(took, a.done.Sub(a.sent))
			if a.code == api.CodeUnavailable {
				from[a.target]++
			}
		case a.status >= 500 || a.status == 0:
			t.Errorf("%s, %s: user %d: %s answered %s (Retry-After %q): want 201, 409 or 503 unavailable/busy with Retry-After",
				class, s.strategy, a.user, a.target, a.outcome(), a.retryAfter)
		}
	}
	for _, p := range e.apis {
		if from[p.Name] == 0 {
			t.Errorf("%s, %s: no 503 unavailable from %s", class, s.strategy, p.Name)
		}
	}
	slices.Sort(took)
	var median, slowest time.Duration
	if len(took) > 0 {
		median, slowest = took[len(took)/2], took[len(took)-1]
	}
	e.log("  %s: %s; 503 in %v median, %v slowest", s.strategy, formatCounts(n),
		median.Round(time.Millisecond), slowest.Round(time.Millisecond))
	if median > promptly {
		t.Errorf("%s, %s: 503s took %v (median): want them at once, not when the fault ends", class, s.strategy, median)
	}
}

// promptly bounds the median time of a 503 during a fault: a fraction of the faults that end
// by themselves (1.5s or more), with room for a loaded machine. The API's Redis client
// retries a failed command once (a cluster client up to three times) after a short backoff.
const promptly = time.Second

// finish sells both products out and verifies the sales and the APIs' logs.
func (e *replyEnv) finish(t *testing.T) {
	t.Helper()
	finishAll(t, e.log, e.sales, e.apis)
	noErrorsLogged(t, e.apis...)
}

// since returns the answers to purchases sent at or after start.
func (s *sale) since(start time.Time) []answer {
	var out []answer
	for _, a := range s.answersSnapshot() {
		if !a.sent.Before(start) {
			out = append(out, a)
		}
	}
	return out
}
