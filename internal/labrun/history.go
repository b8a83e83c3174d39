package labrun

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/timeline"
)

// HistoryCheck is what the linearizability checker (internal/history's CheckLocks) found in
// a cell's lock history: every grant, write, loss and release of the product's lock by the
// three API processes (LOCK_HISTORY), checked against a fenced mutex, where a write is legal
// only while its grant holds the lock. A lock whose flaw oversells lets two holders write, so
// its history is illegal; a lock that keeps its promise leaves a linearizable one.
type HistoryCheck struct {
	Verdict string `json:"verdict"` // history.Linearizable, Illegal or Timeout
	// Expected is Illegal in a cell expected to oversell, else Linearizable.
	Expected string `json:"expected"`
	// Ops is how many operations the checker ordered, Dropped how many it left out as
	// changing nothing (losses, writes refused by the fence).
	Ops     int     `json:"ops"`
	Dropped int     `json:"dropped"`
	Seconds float64 `json:"seconds"` // how long the check took
	// Page is porcupine's HTML page of a history that is not linearizable.
	Page  string `json:"page,omitempty"`
	Error string `json:"error,omitempty"` // the history could not be read or checked
}

// OK reports whether the check came out as expected.
func (h HistoryCheck) OK() bool { return h.Error == "" && h.Verdict == h.Expected }

func (h HistoryCheck) String() string {
	if h.Error != "" {
		return "history: error: " + h.Error
	}
	s := fmt.Sprintf("history %s: %d operations (%d dropped), checked in %.2fs", h.Verdict, h.Ops, h.Dropped, h.Seconds)
	if h.Page != "" {
		s += "; see " + h.Page
	}
	return s
}

// historyTimeout bounds one cell's check: a cell's history is a few hundred operations,
// checked in milliseconds, but porcupine's search may take exponential time to refute one.
const historyTimeout = time.Minute

// historyDir is where the run's lock history and the checker's pages go: cfg.HistoryDir, or
// a new directory under os.TempDir(); the history file is removed when the run ends (see
// closeHistory), the pages stay.
func historyDir(cfg Config) (string, error) {
	if cfg.HistoryDir == "" {
		return os.MkdirTemp("", "seckill-lab-")
	}
	if err := os.MkdirAll(cfg.HistoryDir, 0o755); err != nil {
		return "", err
	}
	// A history left by a run that did not end is not this run's.
	if err := os.Remove(lockHistory(cfg.HistoryDir)); err != nil && !os.IsNotExist(err) {
		return "", err
	}
	return cfg.HistoryDir, nil
}

// lockHistory is the run's lock history file, which the three processes share.
func lockHistory(dir string) string { return filepath.Join(dir, "locks.jsonl") }

// closeHistory removes the run's lock history, and dir too if the run made it and nothing
// else is in it (no page was written).
func (r *run) closeHistory() {
	os.Remove(lockHistory(r.historyDir))
	if r.cfg.HistoryDir == "" {
		os.Remove(r.historyDir) // only if empty
	}
}

// checkHistory checks the operations on the cell's lock key in the run's lock history, and
// draws them as a timeline (nil: the history could not be read).
func (r *run) checkHistory(c Cell, key string) (*HistoryCheck, *timeline.Timeline) {
	h := &HistoryCheck{Expected: string(history.Linearizable)}
	if c.Expected == Oversold {
		h.Expected = string(history.Illegal)
	}
	all, err := history.ReadLockOps(lockHistory(r.historyDir))
	if err != nil {
		h.Error = err.Error()
		return h, nil
	}
	ops := history.OfKey(all, key)
	tl := timeline.Build(key, ops)
	res, err := history.CheckLocks(ops, historyTimeout, r.historyDir)
	h.Verdict, h.Ops, h.Dropped, h.Seconds, h.Page = string(res.Verdict), res.Ops, res.Dropped, res.Duration.Seconds(), res.Visualization
	if err != nil {
		h.Error = err.Error()
	}
	return h, &tl
}
