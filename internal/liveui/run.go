package liveui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/seckill/seckill/internal/labrun"
	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/timeline"
)

// uiRun is one run started from loadtest ui's page: what it is, and every event it produced,
// in order, so that a page that opens it late, or reopens it when it is over, draws the same
// thing as the page that watched it live. It is safe for concurrent use.
type uiRun struct {
	dir    string // where its files are: run.json, events.json and the reports
	cancel context.CancelFunc

	mu      sync.Mutex
	info    runInfo
	events  []uiEvent
	changed chan struct{} // closed and replaced at each event
	ended   bool
	labPace loadgen.SellPace // the pace of the lab cell being run (one at a time)
}

// runInfo describes a run: the page's run object.
type runInfo struct {
	ID      string    `json:"id"`
	Kind    string    `json:"kind"` // "strategies" or "lab"
	Started time.Time `json:"started"`
	// Status is running, then passed, failed (an audit or a lab cell did not keep its
	// promise), stopped (from the page) or error (the run could not go on: Error says why).
	Status  string    `json:"status"`
	Command string    `json:"command"` // the same run from a terminal
	Items   []runItem `json:"items"`
	Error   string    `json:"error,omitempty"`
	Seconds float64   `json:"seconds,omitempty"`
}

// runItem is a strategy, or a lab cell, of a run.
type runItem struct {
	Name     string `json:"name"`
	Safe     bool   `json:"safe"`               // it promises never to oversell
	Expected string `json:"expected,omitempty"` // a lab cell's written expectation
}

// uiEvent is one event of a run, as the page receives it (server-sent events: id, event
// type, data).
type uiEvent struct {
	ID   int             `json:"id"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// Files of a run's directory.
const (
	runFile    = "run.json"
	eventsFile = "events.json"
)

// reportFiles are the reports a run writes, by the name the page downloads them with: the
// same files `loadtest compare -json -plot` or `loadtest lab -json -report` write, and the
// text the command prints.
var reportFiles = []string{"report.json", "report.html", "report.txt"}

func newUIRun(dir string, info runInfo) *uiRun {
	r := &uiRun{dir: dir, info: info, changed: make(chan struct{})}
	r.emit("run", info)
	return r
}

// emit appends an event of type typ with data v (marshalled to JSON) and wakes the readers.
// Nothing is appended after the end event.
func (r *uiRun) emit(typ string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended {
		return
	}
	r.events = append(r.events, uiEvent{ID: len(r.events) + 1, Type: typ, Data: data})
	r.ended = typ == "end"
	close(r.changed)
	r.changed = make(chan struct{})
}

// since returns the events after the one numbered after, a channel closed at the next event,
// and whether the run is over (no event will follow the ones returned).
func (r *uiRun) since(after int) ([]uiEvent, <-chan struct{}, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	after = min(max(after, 0), len(r.events))
	return r.events[after:], r.changed, r.ended
}

func (r *uiRun) snapshot() runInfo {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.info
}

// endEvent is the last event of a run.
type endEvent struct {
	Status  string            `json:"status"`
	OK      bool              `json:"ok"`
	Error   string            `json:"error,omitempty"`
	Seconds float64           `json:"seconds"`
	Files   map[string]string `json:"files"`
}

// finish records how the run ended (err from the command: nil, loadgen.ErrAuditFailed, or why it
// could not run; stopped when the page stopped it) and writes its files. What could not be
// written is returned.
func (r *uiRun) finish(err error, stopped bool, text []byte) error {
	info := r.snapshot()
	info.Seconds = time.Since(info.Started).Seconds()
	switch {
	case stopped:
		info.Status = "stopped"
	case err == nil:
		info.Status = "passed"
	case errors.Is(err, loadgen.ErrAuditFailed):
		info.Status = "failed"
	default:
		info.Status, info.Error = "error", err.Error()
	}
	var ferr error
	if len(text) > 0 {
		ferr = os.WriteFile(filepath.Join(r.dir, "report.txt"), text, 0o644)
	}
	files := map[string]string{}
	for _, f := range reportFiles {
		if _, err := os.Stat(filepath.Join(r.dir, f)); err == nil {
			files[filepath.Ext(f)[1:]] = "/api/runs/" + info.ID + "/" + f
		}
	}
	r.mu.Lock()
	r.info = info
	r.mu.Unlock()
	r.emit("end", endEvent{Status: info.Status, OK: info.Status == "passed", Error: info.Error, Seconds: info.Seconds, Files: files})
	r.mu.Lock()
	events := r.events
	r.mu.Unlock()
	b, err := json.Marshal(events) // compact: each event's data is one line, as the stream sends it
	if err == nil {
		err = os.WriteFile(filepath.Join(r.dir, eventsFile), b, 0o644)
	}
	return errors.Join(ferr, err, writeJSON(filepath.Join(r.dir, runFile), info))
}

// loadUIRun reads a past run from its directory. A run whose process ended before it did
// is marked as an error.
func loadUIRun(dir string) (*uiRun, error) {
	var info runInfo
	if err := readJSON(filepath.Join(dir, runFile), &info); err != nil {
		return nil, err
	}
	r := &uiRun{dir: dir, info: info, changed: make(chan struct{}), ended: true}
	if err := readJSON(filepath.Join(dir, eventsFile), &r.events); err != nil || info.Status == "running" {
		r.info.Status, r.info.Error = "error", "loadtest ui stopped before the run ended"
		r.events, r.ended = nil, false
		r.emit("run", r.info)
		r.emit("end", endEvent{Status: r.info.Status, Error: r.info.Error})
	}
	return r, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// verdictEvent is the audit's verdict of one item, as the command line judges it.
type verdictEvent struct {
	Name         string   `json:"name"`
	OK           bool     `json:"ok"`
	Label        string   `json:"label"`
	Problems     []string `json:"problems,omitempty"`
	Oversold     int64    `json:"oversold"`
	Duplicates   int64    `json:"duplicates"`
	Orders       int64    `json:"orders"`
	Stock        int64    `json:"stock"`
	OrdersPerSec float64  `json:"orders_per_sec"`
	P50          float64  `json:"p50_ms,omitempty"`
	P99          float64  `json:"p99_ms,omitempty"`
	Fault        string   `json:"fault,omitempty"`
	// Timeline is a lab cell's lock timeline (internal/timeline), drawn under its card.
	Timeline *timeline.Timeline `json:"timeline,omitempty"`
	// Reservations and StopReason are an abandonment sale's settled audit and why it stopped.
	Reservations *loadgen.LifecycleAudit `json:"reservations,omitempty"`
	StopReason   string                  `json:"stop_reason,omitempty"`
	// Opening is what an opening measured (loadtest -model opening).
	Opening *loadgen.OpeningReport `json:"opening,omitempty"`
}

// The observer of a strategies run (see execute).

func (r *uiRun) ItemBegan(name string, initialStock int64, safe bool) {
	r.emit("item", map[string]any{"name": name, "initial_stock": initialStock, "safe": safe})
}

func (r *uiRun) ItemSampled(s loadgen.LiveSample) { r.emit("sample", s) }

func (r *uiRun) ItemDone(rep loadgen.RunReport) {
	v := verdictEvent{Name: rep.Name, OK: rep.Verdict.OK, Label: rep.Verdict.Label, Problems: rep.Verdict.Problems,
		Oversold: rep.Oversold(), Duplicates: rep.Dupes(), OrdersPerSec: rep.Stats.OrdersPerSec,
		P50: rep.Stats.Latency.P50, P99: rep.Stats.Latency.P99, Orders: rep.Stats.Buyers(), Stock: -1}
	if a := rep.Audit; a != nil && a.Direct != nil {
		v.Orders, v.Stock = a.Direct.Orders, a.Direct.Stock
	} else if a != nil && a.API != nil {
		v.Orders, v.Stock = int64(a.API.Orders), int64(a.API.Stock)
	}
	if l := rep.Lifecycle; l != nil && l.Audit.Source != "" {
		v.Reservations, v.StopReason = &l.Audit, l.StopReason
	}
	v.Opening = rep.Opening
	r.emit("verdict", v)
}

// The watcher of a lab run (labrun.Watcher): a cell is an item named "lock × scenario".

func cellName(p labrun.Pair) string { return p.Lock + " × " + p.Scenario }

func (r *uiRun) CellBegan(p labrun.Pair, initialStock int, expected string) {
	r.mu.Lock()
	r.labPace = loadgen.SellPace{}
	r.mu.Unlock()
	r.emit("item", map[string]any{"name": cellName(p), "initial_stock": initialStock,
		"safe": expected == labrun.Safe, "expected": expected})
}

// Sampled sends a sample of a lab cell, read from PostgreSQL, with its pace over the selling
// window (loadgen.SellPace; the sale may go on while stock is left).
func (r *uiRun) Sampled(p labrun.Pair, pt labrun.Point) {
	r.mu.Lock()
	pace, win := r.labPace.Observe(time.Duration(pt.MS)*time.Millisecond, int64(pt.Orders), pt.Stock > 0)
	r.mu.Unlock()
	s := map[string]any{"name": cellName(p), "ms": pt.MS, "orders": pt.Orders, "stock": pt.Stock, "orders_per_sec": pace}
	if pace != nil {
		s["pace_window_ms"] = win.Milliseconds()
	}
	r.emit("sample", s)
}

func (r *uiRun) CellDone(c labrun.Cell) {
	label := fmt.Sprintf("%s (expected %s)", c.Summary(), c.Expected)
	var problems []string
	if c.Error != "" {
		problems = append(problems, c.Error)
	}
	if c.Untrue > 0 {
		problems = append(problems, fmt.Sprintf("%d buyers were told something PostgreSQL contradicts", c.Untrue))
	}
	r.emit("verdict", verdictEvent{Name: cellName(labrun.Pair{Lock: c.Lock, Scenario: c.Scenario}), OK: c.OK(),
		Label: label, Problems: problems, Oversold: int64(max(c.Oversold, 0)), Orders: int64(c.Orders), Stock: int64(c.Stock),
		OrdersPerSec: c.OrdersPerSec, Fault: c.Fault, Timeline: c.Timeline})
}

// writeJSON writes v, indented, to the file at path.
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
