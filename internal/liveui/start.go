package liveui

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seckill/seckill/internal/labrun"
	"github.com/seckill/seckill/internal/loadgen"
)

// runRequest is the page's Run: strategies attacked on targets (as compare), or lab locks in
// a scenario (as lab).
type runRequest struct {
	Kind       string   `json:"kind"`
	Strategies []string `json:"strategies"`
	Stock      int64    `json:"stock"`
	ThinkMS    int      `json:"think_ms"`
	Buyers     int      `json:"buyers"`
	DurationS  int      `json:"duration_s"`
	// Rate is requests per second; 0: the -max-rate of loadtest ui.
	Rate int `json:"rate"`
	// Targets picks among the -targets of loadtest ui (all of them when absent): a list of
	// names or indexes (pickTargets), never a URL.
	Targets json.RawMessage `json:"targets"`
	// EtcdTargets picks among its -etcd-targets, APIs whose locks are in etcd: dlock then
	// runs on both backends, as with compare -etcd-targets.
	EtcdTargets json.RawMessage `json:"etcd_targets"`
	Locks       []string        `json:"locks"`
	Scenario    string          `json:"scenario"`
	// PayWithinMS > 0 makes each strategy an abandonment sale (loadtest -pay-within): its
	// winners pay with PayRatio's chance (default 0.7) after up to PayDelayMS (default 1000),
	// cancel with CancelRatio's, and otherwise walk away; the sale goes on until every unit
	// is paid, or the duration ends.
	PayWithinMS int      `json:"pay_within_ms"`
	PayRatio    *float64 `json:"pay_ratio"`
	CancelRatio float64  `json:"cancel_ratio"`
	PayDelayMS  *int     `json:"pay_delay_ms"`
	// Opening, when set, makes each strategy an opening (loadtest -model opening): its
	// product's sale starts InMS after its creation, Burst buyers fire at T0 within WindowMS,
	// EarlyShare of them hammering before it. The duration bounds each from T0.
	Opening *openingRequest `json:"opening"`
}

// handleStart starts a run: 202 with it; 409 while another goes; 400 for a request the
// command line would refuse, with its message, or that names a target not fixed at start or
// asks for more than a ceiling, with a code of its own; 503 when its directory cannot be
// written.
func (u *Server) handleStart(w http.ResponseWriter, r *http.Request) {
	var req runRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		uiProblem(w, http.StatusBadRequest, "bad_request", "the body is not a run request: "+err.Error())
		return
	}
	run, err := u.start(req)
	var usage loadgen.UsageError
	var refused uiRefusal
	switch {
	case errors.Is(err, errBusy):
		uiProblem(w, http.StatusConflict, "run_in_progress", err.Error())
	case errors.As(err, &refused):
		uiProblem(w, http.StatusBadRequest, refused.code, refused.detail)
	case errors.As(err, &usage):
		uiProblem(w, http.StatusBadRequest, "bad_request", err.Error())
	case err != nil: // the run's directory could not be made or written
		w.Header().Set("Retry-After", "5")
		uiProblem(w, http.StatusServiceUnavailable, "storage_unavailable", "the run could not be kept: "+err.Error())
	default:
		w.Header().Set("Location", "/api/runs/"+run.info.ID)
		writeUIJSON(w, http.StatusAccepted, run.snapshot())
	}
}

// uiJob is a run the page asked for, checked as its command line would be: the command, its
// items, and what runs it.
type uiJob struct {
	command string
	items   []runItem
	exec    func(ctx context.Context, run *uiRun, stdout io.Writer) error
}

// start checks req as the command line would, then starts it in the background.
func (u *Server) start(req runRequest) (*uiRun, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if c := u.current; c != nil {
		i := c.snapshot()
		return nil, fmt.Errorf("%w: %s, started %s; wait for it to end or stop it", errBusy, i.ID, i.Started.Local().Format("15:04:05"))
	}
	if u.closed {
		return nil, fmt.Errorf("%w: loadtest ui is stopping", errBusy)
	}
	now := time.Now()
	id := newRunID(now)
	dir := filepath.Join(u.Dir, id)
	var job uiJob
	var err error
	switch req.Kind {
	case "strategies":
		job, err = u.compareJob(req, dir)
	case "lab":
		job, err = u.labJob(req, dir)
	default:
		err = loadgen.UsageError{Err: fmt.Errorf("kind %q: want strategies or lab", req.Kind)}
	}
	if err != nil {
		return nil, err
	}
	info := runInfo{ID: id, Kind: req.Kind, Started: now.UTC(), Status: "running", Command: job.command, Items: job.items}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeJSON(filepath.Join(dir, runFile), info); err != nil {
		return nil, err
	}
	run := newUIRun(dir, info)
	ctx, cancel := context.WithCancel(context.Background())
	run.cancel = cancel
	u.runs[id], u.current = run, run
	u.wg.Go(func() {
		var text bytes.Buffer
		err := job.exec(ctx, run, &text)
		stopped := ctx.Err() != nil
		cancel()
		if ferr := run.finish(err, stopped, text.Bytes()); ferr != nil {
			fmt.Fprintf(u.stderr, "loadtest ui: run %s: %v\n", id, ferr)
		}
		u.mu.Lock()
		u.current = nil
		u.mu.Unlock()
	})
	return run, nil
}

// compareJob is loadtest compare of req's strategies, its files in dir: on the targets it
// picks among those fixed at start, within the ceilings, paced at its rate (the ceiling by
// default) with at most its buyers at once.
func (u *Server) compareJob(req runRequest, dir string) (uiJob, error) {
	if err := u.Limits.check(req); err != nil {
		return uiJob{}, err
	}
	targets, err := pickTargets("targets", req.Targets, u.Targets)
	if err != nil {
		return uiJob{}, err
	}
	etcdTargets, err := pickTargets("etcd_targets", req.EtcdTargets, u.EtcdTargets)
	if err != nil {
		return uiJob{}, err
	}
	rate := cmp.Or(req.Rate, u.Limits.Rate)
	// The command line of the same run, and its flags as the JSON report records them.
	flags := [][2]string{{"targets", strings.Join(targets, ",")}, {"strategies", strings.Join(req.Strategies, ",")},
		{"stock", strconv.FormatInt(req.Stock, 10)}, {"think-ms", strconv.Itoa(req.ThinkMS)}, {"workers", strconv.Itoa(req.Buyers)},
		{"duration", strconv.Itoa(req.DurationS) + "s"}, {"rate", strconv.Itoa(rate)}, {"max-workers", strconv.Itoa(req.Buyers)},
		{"after-soldout", "1s"}, {"baseline", "false"}}
	if len(etcdTargets) > 0 {
		flags = append(flags, [2]string{"etcd-targets", strings.Join(etcdTargets, ",")})
	}
	cfg := u.Compare // compare's defaults and environment, as loadtest ui's command line fixed them
	if sale := abandonFlags(req, &cfg); sale != nil {
		for i := range flags {
			if flags[i][0] == "after-soldout" { // the sale goes on past sold out while units can come back
				flags[i][1] = "0s"
			}
		}
		flags = append(flags, sale...)
	}
	if o := openingFlags(req, &cfg); o != nil {
		var kept [][2]string
		for _, f := range flags {
			if f[0] != "rate" && f[0] != "workers" && f[0] != "after-soldout" { // an opening has its own arrivals, and sends them all
				kept = append(kept, f)
			}
		}
		flags = append(kept, o...)
	}
	var args []string
	for _, f := range flags {
		if f[0] == "baseline" {
			args = append(args, "-baseline=false")
			continue
		}
		args = append(args, "-"+f[0], f[1])
	}
	cfg.Cmd, cfg.Targets, cfg.EtcdTargets = "compare", targets, etcdTargets
	cfg.Strategies, cfg.StrategyFlag = loadgen.SplitList(strings.Join(req.Strategies, ",")), "-strategies"
	cfg.Stock, cfg.ThinkMS, cfg.Workers, cfg.MaxWorkers = req.Stock, req.ThinkMS, req.Buyers, req.Buyers
	cfg.Duration, cfg.Rate = time.Duration(req.DurationS)*time.Second, rate
	cfg.AfterSoldOut, cfg.Baseline, cfg.Progress = time.Second, false, 0
	if cfg.Abandon.On() || cfg.Model == loadgen.ModelOpening {
		cfg.AfterSoldOut = 0
	}
	cfg.JSONPath, cfg.PlotPath, cfg.ResultsPath = filepath.Join(dir, "report.json"), filepath.Join(dir, "report.html"), ""
	cfg.Flags = append(recorded(flags), "-progress=0s")
	slices.Sort(cfg.Flags)
	if err := cfg.Complete(); err != nil {
		return uiJob{}, err
	}
	job := uiJob{command: loadgen.ShellLine(append([]string{"loadtest", "compare"}, args...))}
	for _, it := range cfg.Items() {
		job.items = append(job.items, runItem{Name: it.Name, Safe: loadgen.IsSafe(it.Strategy)})
	}
	job.exec = func(ctx context.Context, run *uiRun, stdout io.Writer) error {
		return loadgen.Execute(ctx, cfg, run, stdout, u.stderr)
	}
	return job, nil
}

// labJob is loadtest lab of req's locks in its scenario, its files in dir.
func (u *Server) labJob(req runRequest, dir string) (uiJob, error) {
	if len(req.Locks) == 0 || req.Scenario == "" {
		return uiJob{}, loadgen.UsageError{Err: errors.New("a lab run wants at least one lock and a scenario")}
	}
	args := []string{"-locks", strings.Join(req.Locks, ","), "-scenarios", req.Scenario}
	if u.LabPrefix != "" {
		args = append(args, "-redis-prefix", u.LabPrefix)
	}
	cells, err := loadgen.LabCells(strings.Join(req.Locks, ","), req.Scenario, false)
	if err != nil {
		return uiJob{}, loadgen.UsageError{Err: err}
	}
	lab := u.Lab // lab's defaults and environment, as loadtest ui's command line fixed them
	lab.Cells, lab.Quiet = cells, true
	if u.LabPrefix != "" {
		lab.Prefix = u.LabPrefix
	}
	lab.JSONPath, lab.ReportPath, lab.HistoryDir = filepath.Join(dir, "report.json"), filepath.Join(dir, "report.html"), ""
	job := uiJob{command: loadgen.ShellLine(append([]string{"loadtest", "lab"}, args...))}
	for _, p := range lab.Cells {
		expected := labrun.Expected[p.Lock][p.Scenario]
		job.items = append(job.items, runItem{Name: cellName(p), Safe: expected == labrun.Safe, Expected: expected})
	}
	job.exec = func(ctx context.Context, run *uiRun, stdout io.Writer) error {
		return loadgen.RunLab(ctx, lab, run, stdout, u.stderr)
	}
	return job, nil
}

// recorded is flags as the JSON report records a command line's: -name=value.
func recorded(flags [][2]string) []string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = "-" + f[0] + "=" + f[1]
	}
	return out
}
