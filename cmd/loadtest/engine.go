package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/audit"
)

// runReport is one attack on one product (or on the bare gin baseline) and its audit.
type runReport struct {
	Name     string `json:"name"`
	Strategy string `json:"strategy,omitempty"`
	// Backend is where the targets took the product's lock, when the run compared lock
	// backends (compare -etcd-targets): "redis" or "etcd".
	Backend   string `json:"backend,omitempty"`
	ProductID int64  `json:"product_id,omitempty"`
	Buyers    struct {
		Distinct int64 `json:"distinct"`
		Repeats  int64 `json:"repeats"`
	} `json:"buyers"`
	Stats   runStats     `json:"stats"`
	Audit   *auditReport `json:"audit,omitempty"`
	Verdict verdict      `json:"verdict"`
}

// oversold and dupes are the worst figures of the audits of r.
func (r runReport) oversold() int64 { return r.worst(func(s audit.Sale) int64 { return s.Oversold }) }
func (r runReport) dupes() int64 {
	return r.worst(func(s audit.Sale) int64 { return s.DuplicateUsers })
}

// worst is the largest figure of the audits of r, 0 without one.
func (r runReport) worst(figure func(audit.Sale) int64) (n int64) {
	if a := r.Audit; a != nil {
		if a.API != nil {
			n = max(n, figure(apiSale(a.API)))
		}
		if a.Direct != nil {
			n = max(n, figure(*a.Direct))
		}
	}
	return n
}

// report is everything one invocation measured; -json writes it.
type report struct {
	Command string    `json:"command"`
	Started time.Time `json:"started"`
	// Flags are the flags set on the command line, outputs aside and secrets redacted.
	Flags   []string    `json:"flags,omitempty"`
	Build   buildReport `json:"build"`
	Machine machine     `json:"machine"`
	// CPU is the machine's CPU time over the attacks, steal included; nil where /proc/stat
	// cannot be read.
	CPU      *cpuTime          `json:"cpu,omitempty"`
	Scenario scenario          `json:"scenario"`
	Meta     map[string]string `json:"meta,omitempty"`
	// Rounds holds every run, one slice per repetition of the scenario (-runs).
	Rounds  [][]runReport `json:"rounds"`
	Summary []summaryRow  `json:"summary"`
	OK      bool          `json:"ok"`
}

// session is one invocation of an attacking command: its configuration, the auditor, the
// output files and the log (stderr, shared with the progress line and the ceiling processes).
type session struct {
	cfg    config
	aud    *auditor
	outs   *outputs
	stderr io.Writer
	cpu    cpuMeter
	obs    observer // nil on the command line
}

// execute runs the attacks of cfg, audits and reports them: the text report on stdout, the
// files cfg names, and what happens to obs as it happens when obs is not nil. An audit that
// failed is errAuditFailed.
func execute(ctx context.Context, cfg config, obs observer, stdout, stderr io.Writer) error {
	stderr = &syncWriter{w: stderr}
	aud, err := newAuditor(ctx, cfg)
	if err != nil {
		return err
	}
	defer aud.close()
	if err := waitReady(ctx, append(slices.Clone(cfg.targets), cfg.etcdTargets...), cfg.wait); err != nil {
		return err
	}
	if len(cfg.etcdTargets) > 0 {
		if err := checkBackends(ctx, cfg.targets, cfg.etcdTargets); err != nil {
			return err
		}
	}
	outs, err := openOutputs(cfg, "seckill loadtest "+cfg.cmd)
	if err != nil {
		return err
	}
	s := &session{cfg: cfg, aud: aud, outs: outs, stderr: stderr, obs: obs}
	rep := report{
		Command: cfg.cmd, Started: time.Now().UTC(), Flags: cfg.flags, Build: readBuild(), Machine: readMachine(ctx, aud),
		Scenario: cfg.scenario(), Meta: cfg.meta.object(),
	}
	fmt.Fprintf(stderr, "loadtest %s: %s\n", cfg.cmd, rep.Scenario.describe())
	runErr := s.rounds(ctx, &rep)
	rep.CPU = s.cpu.result()
	rep.Summary = summarizeRounds(rep.Rounds)
	if line := backendsLine(rep.Summary); line != "" {
		outs.retitle("seckill loadtest " + cfg.cmd + ": " + line)
	}
	rep.OK = runErr == nil && len(rep.Summary) > 0
	for _, row := range rep.Summary {
		rep.OK = rep.OK && row.OK
	}
	if cfg.cmd == "run" && len(rep.Rounds) == 1 && len(rep.Rounds[0]) == 1 {
		printRun(stdout, rep.Scenario, rep.Rounds[0][0])
	} else {
		printTable(stdout, rep)
	}
	errs := []error{runErr, outs.close()}
	if cfg.jsonPath != "" {
		errs = append(errs, writeJSON(cfg.jsonPath, rep))
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if !rep.OK {
		var failed []string
		for _, row := range rep.Summary {
			if !row.OK {
				failed = append(failed, row.Name)
			}
		}
		return fmt.Errorf("%w: %s", errAuditFailed, strings.Join(failed, ", "))
	}
	return nil
}

// rounds runs the scenario cfg.runs times, adding each run to rep as it completes, so that
// an interrupted invocation still reports what it did.
func (s *session) rounds(ctx context.Context, rep *report) error {
	for i := range s.cfg.runs {
		rep.Rounds = append(rep.Rounds, nil)
		for _, it := range s.cfg.items() {
			if err := ctx.Err(); err != nil {
				return err
			}
			r, err := s.runProduct(ctx, it, s.cfg.stock)
			if err != nil {
				return err
			}
			rep.Rounds[i] = append(rep.Rounds[i], r)
		}
		if s.cfg.baseline {
			if err := ctx.Err(); err != nil {
				return err
			}
			rs, err := s.runBaselines(ctx)
			if err != nil {
				return err
			}
			rep.Rounds[i] = append(rep.Rounds[i], rs...)
		}
	}
	return nil
}

// runProduct creates a product of stock for it on its first target, attacks it on its
// targets, audits it and judges the run.
func (s *session) runProduct(ctx context.Context, it item, stock int64) (runReport, error) {
	cfg, strategy, name := s.cfg, it.strategy, it.name
	c := client.New(it.targets[0], &client.Options{AdminToken: cfg.adminToken})
	p, err := c.CreateProduct(ctx, api.NewProduct{
		Name: "loadtest " + name + " " + time.Now().UTC().Format(time.RFC3339), Stock: new(int(stock)),
		Strategy: strings.TrimSuffix(strategy, "-fair"), ThinkMS: cfg.thinkMS, Fair: strategy == fairStrategy,
	})
	if err != nil {
		return runReport{}, fmt.Errorf("create product on %s: %w", it.targets[0], err)
	}
	b := newBuyers(cfg.firstUser, cfg.repeatShare, cfg.seed)
	live := &liveCounts{}
	stockLeft := func(ctx context.Context) (int64, error) {
		q, err := c.Product(ctx, p.ID)
		return int64(q.Stock), err
	}
	stopProgress := progress(ctx, s.stderr, cfg.progress, name, live, stockLeft)
	var lats *latencyWindow
	stopWatch := func() {}
	if s.obs != nil {
		lats = &latencyWindow{}
		s.obs.itemBegan(name, stock, isSafe(strategy))
		stopWatch = follow(ctx, watch{name: name, interval: watchInterval, live: live, lats: lats, stock: stockLeft,
			locks: newLockMeter(ctx, it.targets), emit: s.obs.sampled})
	}
	res, err := s.attack(ctx, name, newTargeter(purchaseURLs(it.targets, p.ID), b), live, lats)
	stopWatch()
	stopProgress()
	if err != nil {
		return runReport{}, err
	}
	r := runReport{Name: name, Strategy: strategy, Backend: it.backend, ProductID: p.ID, Stats: summarize(res)}
	r.Buyers.Distinct, r.Buyers.Repeats = b.issued()

	// The audit runs even after an interrupt, so that a stopped run still says what it did.
	// A queue product's orders are written in the background: the audit waits (bounded) for
	// its queue to drain, and a queue that did not drain fails the verdict.
	var drainErr error
	if strategy == queueStrategy {
		drainErr = drainQueue(context.WithoutCancel(ctx), c, p.ID, queueDrainTimeout, queueDrainInterval)
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	auditNow := func() auditReport {
		a := s.aud.audit(actx, c, p.ID, strategy)
		if drainErr != nil {
			a.Errors = append(a.Errors, drainErr.Error())
		}
		return a
	}
	a := auditNow()
	r.Verdict = judge(strategy, r.Stats, a, cfg.expectNaive)
	if !r.Verdict.OK && r.Stats.Outcomes.unclear() > 0 {
		// Requests that timed out on our side may still be finishing on the server.
		time.Sleep(2 * time.Second)
		a = auditNow()
		r.Verdict = judge(strategy, r.Stats, a, cfg.expectNaive)
	}
	r.Audit = &a
	if s.obs != nil {
		s.obs.itemDone(r)
	}
	fmt.Fprintf(s.stderr, "[%s] product %d: %d requests, bought %d (accepted %d), %.0f orders/s, oversold %d, dupes %d: %s\n",
		name, p.ID, r.Stats.Requests, r.Stats.buyers(), r.Stats.Outcomes[accepted], r.Stats.OrdersPerSec,
		r.oversold(), r.dupes(), r.Verdict.Label)
	printCPU(s.stderr, name, r.Stats)
	if errs := r.Stats.TransportErrors; len(errs) > 0 {
		fmt.Fprintf(s.stderr, "[%s] %d requests got no HTTP answer, such as: %s\n", name, r.Stats.Outcomes[transportError], strings.Join(errs, "; "))
	}
	return r, nil
}

// attack attacks with the scenario's pacer and tr, measuring the machine's CPU time, and adds
// the result to the output files. lats may be nil.
func (s *session) attack(ctx context.Context, name string, tr vegeta.Targeter, live *liveCounts, lats *latencyWindow) (*attackResult, error) {
	done := s.cpu.measure()
	res, err := attack(ctx, specFor(s.cfg, name, tr), live, lats, s.outs.enc)
	used := done()
	if err != nil {
		return nil, err
	}
	res.cpuTicks = used
	return res, s.outs.addPlot(res)
}

// waitReady polls GET /readyz of every target until each answers 200, for at most wait.
func waitReady(ctx context.Context, targets []string, wait time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for _, t := range targets {
		c := client.New(t, nil)
		for {
			err := c.Ready(ctx)
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s is not ready: %w", t, err)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	return nil
}

// syncWriter serialises writes to w: the progress line, the ceiling processes' output and
// the run summaries share stderr.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
