package history

import (
	"fmt"
	"math"
	"os"
	"time"

	"github.com/anishathalye/porcupine"
)

// Verdict is what a check decided.
type Verdict string

// The verdicts of a check.
const (
	// Linearizable: some legal order of the operations explains every outcome.
	Linearizable Verdict = "linearizable"
	// Illegal: no legal order explains the outcomes.
	Illegal Verdict = "illegal"
	// Timeout: the search ran out of time undecided.
	Timeout Verdict = "timeout"
)

// Result is what a check found.
type Result struct {
	Verdict Verdict
	// Ops counts the operations ordered; Dropped, those that changed nothing; Settled, those
	// decided without the search.
	Ops, Dropped, Settled int
	// Partitions is the number of independent parts checked (products, lock keys).
	Partitions int
	// Duration is how long the check took.
	Duration time.Duration
	// Visualization is the path of porcupine's page, written unless Linearizable.
	Visualization string
	// Reasons are the first few reasons a count before the search found it Illegal.
	Reasons []string
	// Search is porcupine's own verdict, Timeout when Reasons cut it short.
	Search Verdict
}

// OK reports whether the history is linearizable.
func (r Result) OK() bool { return r.Verdict == Linearizable }

// String returns the result in one line.
func (r Result) String() string {
	s := fmt.Sprintf("%s: %d operations ordered (%d settled, %d dropped) in %d partitions, checked in %v",
		r.Verdict, r.Ops, r.Settled, r.Dropped, r.Partitions, r.Duration.Round(time.Millisecond))
	if len(r.Reasons) > 0 {
		s += "; " + r.Reasons[0]
		if len(r.Reasons) > 1 {
			s += fmt.Sprintf(" (and %d more)", len(r.Reasons)-1)
		}
	}
	if r.Visualization != "" {
		s += "; see " + r.Visualization
	}
	return s
}

// never is the completion time of an operation that may take effect at any time after its
// invoke: porcupine's way of saying "no answer".
const never int64 = math.MaxInt64

// nanos is t on porcupine's clock; the zero time (no completion) is never.
func nanos(t time.Time) int64 {
	if t.IsZero() {
		return never
	}
	return t.UnixNano()
}

// MaxSearch is the most operations per partition the checker orders (memory is quadratic:
// 110 MB for 30,000).
const MaxSearch = 30_000

// refutedSearch bounds porcupine's search of a history that reasons already proved illegal:
// it runs for the page, and proving what the count proved can take it exponential time.
const refutedSearch = 2 * time.Second

// check runs porcupine on history with model and writes the visualization to dir (see
// CheckLocks) unless the history is linearizable. reasons are violations found before the
// search, each a proof that the history is illegal. name begins the file's name.
// begun is when the caller began the check.
func check(model porcupine.Model, history []porcupine.Operation, dropped int, reasons []string, begun time.Time, timeout time.Duration, dir, name string) (Result, error) {
	parts := model.Partition(history)
	res := Result{Ops: len(history), Dropped: dropped, Partitions: len(parts), Reasons: reasons}
	for _, p := range parts {
		if len(p) > MaxSearch {
			return res, fmt.Errorf("%d operations of one %s to order, more than the %d the checker can hold", len(p), partName[name], MaxSearch)
		}
	}
	if len(reasons) > 0 && (timeout <= 0 || timeout > refutedSearch) {
		timeout = refutedSearch
	}
	// Verbose from the start: the linearization info costs little on a legal history (the
	// checker rarely backtracks), and a second run of an illegal one could take as long as
	// the first.
	verdict, info := porcupine.CheckOperationsVerbose(model, history, timeout)
	res.Duration = time.Since(begun)
	res.Search = map[porcupine.CheckResult]Verdict{porcupine.Ok: Linearizable, porcupine.Illegal: Illegal}[verdict]
	if res.Search == "" {
		res.Search = Timeout
	}
	res.Verdict = res.Search
	switch {
	case res.Search == Linearizable && len(reasons) > 0:
		return res, fmt.Errorf("the checker contradicts itself: porcupine found an order, yet %s", reasons[0])
	case res.Search == Linearizable:
		return res, nil
	case len(reasons) > 0:
		res.Verdict = Illegal
	}
	path, err := visualize(model, info, dir, name)
	res.Visualization = path
	return res, err
}

// partName names the parts of a history by the name of its check.
var partName = map[string]string{"purchases": "product", "locks": "lock key"}

// visualize writes porcupine's HTML page of info to a new file in dir ("" means a new
// directory under os.TempDir(), left in place) and returns its path.
func visualize(model porcupine.Model, info porcupine.LinearizationInfo, dir, name string) (string, error) {
	if dir == "" {
		d, err := os.MkdirTemp("", "seckill-history-")
		if err != nil {
			return "", fmt.Errorf("visualization: %w", err)
		}
		dir = d
	}
	f, err := os.CreateTemp(dir, name+"-*.html")
	if err != nil {
		return "", fmt.Errorf("visualization: %w", err)
	}
	err = porcupine.Visualize(model, info, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return f.Name(), fmt.Errorf("visualization %s: %w", f.Name(), err)
	}
	return f.Name(), nil
}
