package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/seckill/seckill/internal/audit"
)

// RunReport is one attack on one product (or on the bare gin baseline) and its audit.
type RunReport struct {
	Name     string `json:"name"`
	Strategy string `json:"strategy,omitempty"`
	// Backend is "redis", "etcd" or "zookeeper" when comparing lock backends.
	Backend   string `json:"backend,omitempty"`
	ProductID int64  `json:"product_id,omitempty"`
	Buyers    struct {
		Distinct int64 `json:"distinct"`
		Repeats  int64 `json:"repeats"`
		// LateTokens is how many buyers' tokens were minted during the attack, outside the
		// pool minted before it (-sign-key: Tokens.Premint).
		LateTokens int64 `json:"late_tokens,omitempty"`
	} `json:"buyers"`
	Stats RunStats     `json:"stats"`
	Audit *auditReport `json:"audit,omitempty"`
	// Lifecycle is what an abandonment sale (-pay-within) did with its reservations.
	Lifecycle *LifecycleReport `json:"lifecycle,omitempty"`
	// History is what -check found in the history of the run's purchases; nil without it.
	History *historyReport `json:"history,omitempty"`
	// Opening is what an opening (-model opening) measured; nil otherwise.
	Opening *OpeningReport `json:"opening,omitempty"`
	Verdict verdict        `json:"verdict"`
}

// Oversold and Dupes are the worst figures of the audits of r.
func (r RunReport) Oversold() int64 { return r.worst(func(s audit.Sale) int64 { return s.Oversold }) }
func (r RunReport) Dupes() int64 {
	return r.worst(func(s audit.Sale) int64 { return s.DuplicateUsers })
}

// worst is the largest figure of the audits of r, 0 without one.
func (r RunReport) worst(figure func(audit.Sale) int64) (n int64) {
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

// Report is everything one invocation measured; -json writes it.
type Report struct {
	Command string    `json:"command"`
	Started time.Time `json:"started"`
	// Flags are the flags set on the command line, outputs aside and secrets redacted.
	Flags   []string    `json:"flags,omitempty"`
	Build   BuildReport `json:"build"`
	Machine Machine     `json:"machine"`
	// CPU is the machine's CPU time; nil without /proc/stat.
	CPU      *CPUTime          `json:"cpu,omitempty"`
	Scenario Scenario          `json:"scenario"`
	Meta     map[string]string `json:"meta,omitempty"`
	// Rounds holds every run, one slice per repetition of the scenario (-runs).
	Rounds  [][]RunReport `json:"rounds"`
	Summary []SummaryRow  `json:"summary"`
	OK      bool          `json:"ok"`
	// Gate: the deployment, the existing product, which audit ran, the thresholds (gate.go).
	Gate
}

// session is one invocation of an attacking command: its configuration, the auditor, the
// output files and the log (stderr, shared with the progress line and the ceiling processes).
type session struct {
	cfg    Config
	aud    *auditor
	outs   *outputs
	stderr io.Writer
	cpu    cpuMeter
	obs    Observer // nil on the command line
}

// Execute runs, audits and reports cfg's attacks, telling obs if not nil. Errors: ErrAuditFailed,
// ErrThresholds.
func Execute(ctx context.Context, cfg Config, obs Observer, stdout, stderr io.Writer) error {
	stderr = &syncWriter{w: stderr}
	aud, err := newAuditor(ctx, cfg)
	if err != nil {
		return err
	}
	defer aud.close()
	all := append(append(slices.Clone(cfg.Targets), cfg.EtcdTargets...), cfg.ZooKeeperTargets...)
	if err := WaitReady(ctx, cfg.Deploy, all, cfg.Wait); err != nil {
		return err
	}
	if others := cfg.otherBackends(); len(others) > 0 {
		if err := checkBackends(ctx, cfg.Deploy, cfg.Targets, others); err != nil {
			return err
		}
	}
	existing, err := resolveProduct(ctx, &cfg) // -product (gate.go)
	if err != nil {
		return err
	}
	outs, err := openOutputs(cfg, "seckill loadtest "+cfg.Cmd)
	if err != nil {
		return err
	}
	s := &session{cfg: cfg, aud: aud, outs: outs, stderr: stderr, obs: obs}
	rep := Report{
		Command: cfg.Cmd, Started: time.Now().UTC(), Flags: cfg.Flags, Build: readBuild(), Machine: readMachine(ctx, aud),
		Scenario: cfg.Scenario(), Meta: cfg.Meta.Object(),
	}
	fmt.Fprintf(stderr, "loadtest %s: %s\n", cfg.Cmd, rep.Scenario.describe())
	for _, w := range cfg.Abandon.Warnings() {
		fmt.Fprintf(stderr, "loadtest %s: warning: %s\n", cfg.Cmd, w)
	}
	runErr := s.rounds(ctx, &rep)
	rep.CPU = s.cpu.result()
	rep.Summary = summarizeRounds(rep.Rounds)
	if line := backendsLine(rep.Summary); line != "" {
		outs.retitle("seckill loadtest " + cfg.Cmd + ": " + line)
	}
	rep.OK = runErr == nil && len(rep.Summary) > 0
	for _, row := range rep.Summary {
		rep.OK = rep.OK && row.OK
	}
	rep.Gate = newGate(cfg, aud, existing, rep.Summary, rep.Rounds)
	if cfg.Cmd == "run" && len(rep.Rounds) == 1 && len(rep.Rounds[0]) == 1 {
		printRun(stdout, rep.Scenario, rep.Rounds[0][0])
	} else {
		PrintTable(stdout, rep)
	}
	printLifecycles(stdout, rep)
	printGate(stdout, rep.Gate)
	outs.extra = lifecyclesHTML(rep)
	errs := []error{runErr, outs.close()}
	if cfg.JSONPath != "" {
		errs = append(errs, writeJSON(cfg.JSONPath, rep))
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
		return fmt.Errorf("%w: %s", ErrAuditFailed, strings.Join(failed, ", "))
	}
	return rep.Gate.err()
}

// rounds runs the scenario cfg.runs times, adding each run to rep as it completes, so that
// an interrupted invocation still reports what it did.
func (s *session) rounds(ctx context.Context, rep *Report) error {
	for i := range s.cfg.Runs {
		rep.Rounds = append(rep.Rounds, nil)
		for _, it := range s.cfg.Items() {
			if err := ctx.Err(); err != nil {
				return err
			}
			r, err := s.runProduct(ctx, it, s.cfg.Stock)
			if err != nil {
				return err
			}
			rep.Rounds[i] = append(rep.Rounds[i], r)
		}
		if s.cfg.Baseline {
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
func (s *session) runProduct(ctx context.Context, it Item, stock int64) (RunReport, error) {
	cfg, strategy, name := s.cfg, it.Strategy, it.Name
	c := cfg.Deploy.apiClient(it.Targets[0], cfg.AdminToken)
	p, stock, err := s.product(ctx, c, it, stock) // a fresh product, or -product's (gate.go)
	if err != nil {
		return RunReport{}, err
	}
	lateTokens, err := s.premint(ctx, name)
	if err != nil {
		return RunReport{}, err
	}
	b := newBuyers(cfg.FirstUser, cfg.RepeatShare, cfg.Seed)
	live := &liveCounts{}
	stockLeft := func(ctx context.Context) (int64, error) {
		q, err := c.Product(ctx, p.ID)
		return int64(q.Stock), err
	}
	stopProgress := progress(ctx, s.stderr, cfg.Progress, name, live, stockLeft)
	atkCtx, lc, stopLifecycle := s.startLifecycle(ctx, c, it, p.ID, stock) // -pay-within (lifecycle_run.go)
	var lats *latencyWindow
	stopWatch := func() {}
	if s.obs != nil {
		lats = &latencyWindow{}
		s.obs.ItemBegan(name, stock, IsSafe(strategy))
		stopWatch = follow(ctx, watch{name: name, interval: watchInterval, live: live, lats: lats, stock: stockLeft,
			locks: newLockMeter(ctx, cfg.Deploy, it.Targets), lc: lc, opensAt: p.StartsAt, emit: s.obs.ItemSampled})
	}
	log := newPurchaseLog(p.ID, cfg.Check) // each buyer's answers; every purchase with -check
	tr := newTargeter(purchaseURLs(it.Targets, p.ID), b, cfg.Deploy.Tokens)
	plan, tr, err := s.openingOf(p, it.Targets, log, tr) // -model opening (opening.go)
	if err != nil {
		stopWatch()
		stopProgress()
		return RunReport{}, err
	}
	res, err := s.attack(atkCtx, name, tr, live, lats, log, lc, plan)
	lcReport := stopLifecycle(res)
	stopWatch()
	stopProgress()
	if err != nil {
		return RunReport{}, err
	}
	r := RunReport{Name: name, Strategy: strategy, Backend: it.Backend, ProductID: p.ID, Stats: summarize(res), Lifecycle: lcReport}
	r.Buyers.Distinct, r.Buyers.Repeats = b.issued()
	if plan != nil {
		r.Buyers.Distinct = int64(plan.o.Burst)
	}
	r.Buyers.LateTokens = lateTokens()

	// The audit runs even after an interrupt, so that a stopped run still says what it did.
	// A queue product's orders are written in the background: the audit waits (bounded) for
	// its queue to drain, and a queue that did not drain fails the verdict.
	var drainErr error
	if strategy == QueueStrategy {
		drainErr = drainQueue(context.WithoutCancel(ctx), c, p.ID, queueDrainTimeout, queueDrainInterval)
	}
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	auditNow := func() auditReport {
		a := s.aud.audit(actx, c, p.ID, strategy, log)
		if drainErr != nil {
			a.Errors = append(a.Errors, drainErr.Error())
		}
		if a.API != nil && lc != nil {
			a.Ended = int64(a.API.Ended)
		}
		return a
	}
	a := auditNow()
	r.Verdict = judge(strategy, r.Stats, a, cfg.ExpectNaive)
	if !r.Verdict.OK && r.Stats.Outcomes.Unclear() > 0 {
		// Requests that timed out on our side may still be finishing on the server.
		time.Sleep(2 * time.Second)
		a = auditNow()
		r.Verdict = judge(strategy, r.Stats, a, cfg.ExpectNaive)
	}
	r.Audit = &a
	s.judgeLifecycle(actx, &r, lc)
	s.judgeOpening(actx, &r, plan, log, stock)
	if cfg.Check {
		r.History = s.checkHistory(actx, log, stock, s.cfg.checkDir())
		judgeHistory(&r.Verdict, strategy, r.History)
		fmt.Fprintf(s.stderr, "[%s] history %s\n", name, r.History)
	}
	if s.obs != nil {
		s.obs.ItemDone(r)
	}
	fmt.Fprintf(s.stderr, "[%s] product %d: %d requests, bought %d (accepted %d), %.0f orders/s, oversold %d, dupes %d: %s\n",
		name, p.ID, r.Stats.Requests, r.Stats.Buyers(), r.Stats.Outcomes[Accepted], r.Stats.OrdersPerSec,
		r.Oversold(), r.Dupes(), r.Verdict.Label)
	printCPU(s.stderr, name, r.Stats)
	if errs := r.Stats.TransportErrors; len(errs) > 0 {
		fmt.Fprintf(s.stderr, "[%s] %d requests got no HTTP answer, such as: %s\n", name, r.Stats.Outcomes[TransportError], strings.Join(errs, "; "))
	}
	return r, nil
}

// attack attacks with the scenario's pacer and tr, measuring the machine's CPU time, and adds
// the result to the output files. lats may be nil;
// history, when not nil, records the attack's purchases (-check); lc, when not nil, is told
// of each reservation (-pay-within); plan, when not nil, is the opening it runs.
func (s *session) attack(ctx context.Context, name string, tr vegeta.Targeter, live *liveCounts, lats *latencyWindow, history *purchaseLog, lc *lifecycle, plan *openingPlan) (*attackResult, error) {
	done := s.cpu.measure()
	spec := specFor(s.cfg, name, tr)
	if plan != nil {
		spec = spec.opening(*plan, s.cfg.Duration)
	}
	spec.history = history
	if lc != nil {
		spec.onBought = lc.reservedBy
	}
	res, err := attack(ctx, spec, live, lats, s.outs.enc)
	used := done()
	if err != nil {
		return nil, err
	}
	res.cpuTicks = used
	return res, s.outs.add(res)
}
