package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/seckill/seckill/internal/envflag"
	"github.com/seckill/seckill/internal/labrun"
)

const uiHelp = `Serve a web page for running sales and watching them live (docs/ui.md): pick strategies
(sold by the -targets APIs, as compare does) or lab locks and a scenario (the lab starts its own
three API processes, as lab does), press Run, and watch orders and stock against the initial
stock, answers, latencies and the lock's figures move, then the audit's verdict of each, exactly
as the command line gives it. Past runs are kept under -dir, can be reopened, and downloaded as
the JSON and HTML reports compare and lab write. One run at a time; every run is bounded as on
the command line. Every asset is in the binary: the page needs no network.

What a run may attack is fixed here: the -targets and -etcd-targets APIs (a run picks among them,
never names a URL; the admin token goes to them only), at most -max-buyers buyers, -max-duration
per strategy and -max-rate requests per second. Only the page itself can start or stop a run (its
Origin and its per-start token). It listens on loopback only, answering its own address, unless
-public, which wants an access token (env LOADTEST_UI_ACCESS_TOKEN) asked of every request.`

// cmdUI serves the live page until ctx ends; a run going then is stopped and written first.
func cmdUI(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("ui", "[flags]", uiHelp, stderr)
	e := envflag.New(fs, getenv)
	addr := fs.String("addr", "127.0.0.1:8090", "listen address")
	public := fs.Bool("public", false, "allow a listen address that is not loopback, and any Host header; wants -access-token")
	var targets, accessToken string
	e.StringVar(&targets, "targets", "LOADTEST_TARGETS", "http://127.0.0.1:8081,http://127.0.0.1:8082,http://127.0.0.1:8083",
		"the APIs a strategies run may attack, comma-separated base URLs; a run picks among them (env LOADTEST_TARGETS; make demo-ui starts these three)")
	etcdTargets := fs.String("etcd-targets", "", "the APIs with LOCK_BACKEND=etcd a strategies run may attack, on which dlock runs beside -targets (compare -etcd-targets)")
	e.QuietVar(&accessToken, "access-token", "LOADTEST_UI_ACCESS_TOKEN", "",
		"password (basic auth, any user name) every request must carry; -public wants one of at least 16 characters (env LOADTEST_UI_ACCESS_TOKEN; prefer the env, argv is visible to ps)")
	limits := defaultUILimits
	fs.IntVar(&limits.Buyers, "max-buyers", limits.Buyers, "most concurrent buyers a run may ask for")
	fs.DurationVar(&limits.Duration, "max-duration", limits.Duration, "longest attack per strategy a run may ask for")
	fs.IntVar(&limits.Rate, "max-rate", limits.Rate, "most requests per second a run may ask for (a run is paced at its rate, this by default)")
	dir := fs.String("dir", defaultUIDir(), "where runs are kept, one directory each")
	labPrefix := fs.String("lab-redis-prefix", "", "REDIS_KEY_PREFIX of the lab's API processes; default lab- and 8 random characters per run")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(*addr)
	if err != nil {
		return usageError{fmt.Errorf("-addr %q: %w", *addr, err)}
	}
	if !*public && !loopbackHost(host) {
		return usageError{fmt.Errorf("-addr %s is not loopback: the page starts load; add -public (and an access token) to serve it there", *addr)}
	}
	switch {
	case *public && accessToken == "":
		return usageError{errors.New("-public: set LOADTEST_UI_ACCESS_TOKEN (or -access-token) to a password of at least 16 characters: whoever reaches the page could start load otherwise")}
	case accessToken != "" && len(accessToken) < 16:
		return usageError{fmt.Errorf("-access-token: %d characters, want at least 16", len(accessToken))}
	case accessToken != "" && accessToken == getenv("ADMIN_TOKEN"):
		return usageError{errors.New("-access-token: is the API's ADMIN_TOKEN; give the page a password of its own")}
	}
	if err := limits.validate(); err != nil {
		return usageError{err}
	}
	cfg := uiConfig{dir: *dir, limits: limits, public: *public, accessToken: accessToken, labPrefix: *labPrefix}
	if cfg.targets, err = fixedTargets("-targets", targets, nil); err != nil {
		return err
	}
	if cfg.etcdTargets, err = fixedTargets("-etcd-targets", *etcdTargets, cfg.targets); err != nil {
		return err
	}
	if getenv("ADMIN_TOKEN") == "" {
		fmt.Fprintln(stderr, "loadtest ui: ADMIN_TOKEN is not set: strategies runs will be refused (the lab needs none)")
	}
	u, err := newUIServer(cfg, getenv, stderr)
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("ui: %w", err)
	}
	srv := &http.Server{Handler: u.handler(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "loadtest ui: http://%s/  (runs kept in %s; Ctrl-C stops)\n", ln.Addr(), *dir)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	u.close()
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	srv.Shutdown(sctx) // event streams of a run that ended have ended too
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// defaultUIDir is where runs are kept by default: the user's cache directory.
func defaultUIDir() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "seckill", "ui-runs")
	}
	return filepath.Join(os.TempDir(), "seckill-ui-runs")
}

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
}

// handleStart starts a run: 202 with it; 409 while another goes; 400 for a request the
// command line would refuse, with its message, or that names a target not fixed at start or
// asks for more than a ceiling, with a code of its own; 503 when its directory cannot be
// written.
func (u *uiServer) handleStart(w http.ResponseWriter, r *http.Request) {
	var req runRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		uiProblem(w, http.StatusBadRequest, "bad_request", "the body is not a run request: "+err.Error())
		return
	}
	run, err := u.start(req)
	var usage usageError
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
func (u *uiServer) start(req runRequest) (*uiRun, error) {
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
	dir := filepath.Join(u.dir, id)
	var job uiJob
	var err error
	switch req.Kind {
	case "strategies":
		job, err = u.compareJob(req, dir)
	case "lab":
		job, err = u.labJob(req, dir)
	default:
		err = usageError{fmt.Errorf("kind %q: want strategies or lab", req.Kind)}
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
func (u *uiServer) compareJob(req runRequest, dir string) (uiJob, error) {
	if err := u.limits.check(req); err != nil {
		return uiJob{}, err
	}
	targets, err := pickTargets("targets", req.Targets, u.targets)
	if err != nil {
		return uiJob{}, err
	}
	etcdTargets, err := pickTargets("etcd_targets", req.EtcdTargets, u.etcdTargets)
	if err != nil {
		return uiJob{}, err
	}
	rate := cmp.Or(req.Rate, u.limits.Rate)
	args := []string{"-targets", strings.Join(targets, ","), "-strategies", strings.Join(req.Strategies, ","),
		"-stock", strconv.FormatInt(req.Stock, 10), "-think-ms", strconv.Itoa(req.ThinkMS), "-workers", strconv.Itoa(req.Buyers),
		"-duration", strconv.Itoa(req.DurationS) + "s", "-rate", strconv.Itoa(rate), "-max-workers", strconv.Itoa(req.Buyers),
		"-after-soldout", "1s", "-baseline=false"}
	if len(etcdTargets) > 0 {
		args = append(args, "-etcd-targets", strings.Join(etcdTargets, ","))
	}
	files := []string{"-progress", "0", "-json", filepath.Join(dir, "report.json"), "-plot", filepath.Join(dir, "report.html")}
	cfg, err := compareConfig(append(args, files...), u.getenv, io.Discard)
	if err != nil {
		return uiJob{}, err
	}
	job := uiJob{command: shellLine(append([]string{"loadtest", "compare"}, args...))}
	for _, it := range cfg.items() {
		job.items = append(job.items, runItem{Name: it.name, Safe: isSafe(it.strategy)})
	}
	job.exec = func(ctx context.Context, run *uiRun, stdout io.Writer) error {
		return execute(ctx, cfg, run, stdout, u.stderr)
	}
	return job, nil
}

// labJob is loadtest lab of req's locks in its scenario, its files in dir.
func (u *uiServer) labJob(req runRequest, dir string) (uiJob, error) {
	if len(req.Locks) == 0 || req.Scenario == "" {
		return uiJob{}, usageError{errors.New("a lab run wants at least one lock and a scenario")}
	}
	args := []string{"-locks", strings.Join(req.Locks, ","), "-scenarios", req.Scenario}
	if u.labPrefix != "" {
		args = append(args, "-redis-prefix", u.labPrefix)
	}
	lab, err := labConfig(append(args, "-quiet", "-json", filepath.Join(dir, "report.json"), "-report", filepath.Join(dir, "report.html")),
		u.getenv, io.Discard)
	if err != nil {
		return uiJob{}, err
	}
	job := uiJob{command: shellLine(append([]string{"loadtest", "lab"}, args...))}
	for _, p := range lab.cells {
		expected := labrun.Expected[p.Lock][p.Scenario]
		job.items = append(job.items, runItem{Name: cellName(p), Safe: expected == labrun.Safe, Expected: expected})
	}
	job.exec = func(ctx context.Context, run *uiRun, stdout io.Writer) error {
		return runLab(ctx, lab, run, stdout, u.stderr)
	}
	return job, nil
}
