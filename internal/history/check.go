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
	// Linearizable: some legal order of the operations, each placed between its invoke and
	// its completion, explains every outcome.
	Linearizable Verdict = "linearizable"
	// Illegal: no legal order explains the outcomes; the visualization shows the longest
	// partial orders the checker found and the operations none of them could place.
	Illegal Verdict = "illegal"
	// Timeout: the search ran out of time undecided. Not a proof of either.
	Timeout Verdict = "timeout"
)

// Result is what a check found. It is a plain value, safe for concurrent reads.
type Result struct {
	Verdict Verdict
	// Ops is the number of operations the checker ordered; Dropped, those left out because
	// they changed nothing and no order could make them illegal (refusals, losses, failed
	// writes, unknown answers that the database says did nothing); Settled, those decided
	// legal without the search (see CheckPurchases).
	Ops, Dropped, Settled int
	// Partitions is the number of independent parts checked (products, lock keys).
	Partitions int
	// Duration is how long the check took, the visualization's writing excluded.
	Duration time.Duration
	// Visualization is the path of porcupine's HTML page of the history, written when the
	// verdict is not Linearizable; "" otherwise.
	Visualization string
	// Reasons say in words why the history is Illegal, when a quick count before the search
	// proved it (see CheckPurchases); the first few, in the order of the history.
	Reasons []string
	// Search is porcupine's own verdict. It differs from Verdict only when Reasons proved the
	// history illegal and the search, cut short then, did not finish (Timeout).
	Search Verdict
}

// OK reports whether the history is linearizable.
func (r Result) OK() bool { return r.Verdict == Linearizable }

// String is the result in one line, e.g. "linearizable: 310 operations ordered (19800
// settled, 12 dropped) in 1 partitions, checked in 9ms".
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

// MaxSearch is the most operations of one part of a history (a product, a lock key) the
// checker orders: porcupine keeps a set of the operations ordered so far for each step, so
// its memory grows with the square of their number, 110 MB for 30,000.
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
