package loadgen

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// attackSpec is one bounded attack: it ends at duration (an open run's stages end it too) or
// after requests, whichever comes first, or afterSold after the first sold_out answer, or
// when ctx ends.
type attackSpec struct {
	name     string // vegeta's attack name: the strategy, or the baseline's name
	targeter vegeta.Targeter
	model    string // ModelOpen or ModelClosed
	rate     int    // open: arrivals per second (without stages); closed: the schedule, 0 for none
	stages   Stages // open only
	workers  int    // closed: the pool; open: the workers to start with
	// maxWorkers is an open run's cap on requests in flight: an arrival due when that many are
	// in flight waits for one to end, and is counted as delayed (or dropped, never sent).
	maxWorkers int
	duration   time.Duration
	requests   uint64
	timeout    time.Duration
	afterSold  time.Duration
	// history, when not nil, records every purchase of the attack for -check.
	history *purchaseLog
	// onBought, when not nil, is told the buyer of each answer 201, or 202 (queued: true),
	// an abandonment sale's reservations (lifecycle.go); it must not block.
	onBought func(user int64, queued bool)
	// keepSamples keeps every answer (32 bytes each), for the plot.
	keepSamples bool
	deploy      Deployment // headers and client TLS (transport.go)
	// beforeStart, when not nil, runs once the attack is set up, before its epoch: tests
	// stand in for a slow setup with it.
	beforeStart func()
	// epoch, when not zero, is the attack's epoch, planned ahead (an opening's): the attack
	// waits for it, and its schedule runs on it even when the setup overran it.
	epoch time.Time
	// saleFrom is when an opening's sale starts, since the epoch; the selling window (and
	// orders/s) runs from it. 0: from the first send.
	saleFrom time.Duration
	// pacer, when not nil, paces the attack instead of its schedule (an opening through a
	// line: each purchase when its buyer's turn comes); the schedule still measures lateness.
	pacer vegeta.Pacer
}

func specFor(cfg Config, name string, tr vegeta.Targeter) attackSpec {
	return attackSpec{
		name: name, targeter: tr, model: cfg.model(), rate: cfg.Rate, stages: cfg.Stages, workers: cfg.Workers,
		maxWorkers: cfg.MaxWorkers, duration: cfg.Duration, requests: cfg.Requests, timeout: cfg.Timeout,
		afterSold: cfg.AfterSoldOut, keepSamples: cfg.PlotPath != "", deploy: cfg.Deploy,
	}
}

// opening is spec as the opening p runs it: an open attack on p's epoch and schedule,
// of p's requests, bounded by -duration from T0.
func (spec attackSpec) opening(p openingPlan, within time.Duration) attackSpec {
	spec.model, spec.rate, spec.stages, spec.epoch, spec.saleFrom = ModelOpen, 0, p.stages, p.epoch, p.t0At()
	spec.requests = uint64(p.o.requests())
	spec.duration = p.t0At() + within
	if p.line != nil {
		spec.pacer, spec.targeter = p.line.f, p.line.f.Target
	}
	return spec
}

// plan is how vegeta runs spec: the schedule (nil for a closed run without a rate), the
// pacer, and the workers to start with and at most.
func (spec attackSpec) plan() (sched *schedule, p vegeta.Pacer, workers, most int) {
	if spec.model == ModelOpen {
		s := newSchedule(float64(spec.rate), spec.stages)
		most = max(1, spec.maxWorkers)
		if spec.pacer != nil {
			return &s, spec.pacer, min(max(1, spec.workers), most), most
		}
		return &s, schedulePacer{s: s, max: spec.requests}, min(max(1, spec.workers), most), most
	}
	if spec.rate > 0 { // wrk2: the pool is paced at rate, each request due at its place in the schedule
		s := newSchedule(float64(spec.rate), nil)
		return &s, schedulePacer{s: s, max: spec.requests}, spec.workers, spec.workers
	}
	return nil, newPacer(0, spec.requests), spec.workers, spec.workers
}

// sample is what the plot keeps of one answer (attackSpec.keepSamples).
type sample struct {
	seq uint64
	at  time.Duration // when the request was sent, since the attack began
	lat time.Duration
	out Outcome
}

// attackResult is everything one attack measured; no-target results are not in it.
type attackResult struct {
	name    string
	model   string
	began   time.Time
	metrics vegeta.Metrics
	counts  Counts
	tally   *tally
	// correctedAfter is the interval of the after-the-fact correction of a closed run without
	// a schedule (correctedCopy); 0 otherwise.
	correctedAfter time.Duration
	arrivals       ArrivalStats
	seconds        []secondRow
	samples        []sample      // with keepSamples only, in sequence order
	excluded       int64         // "no targets" results dropped
	saleFrom       time.Duration // attackSpec.saleFrom
	// readmitted are admitting answers (see outcome.admits) to a buyer an earlier one already
	// admitted: the queue strategy answers 202 again while the purchase is still queued.
	readmitted int64
	// requeued are 202 answers to a buyer whose last admitting answer was a 202 too: most
	// likely the same queued purchase, asked again before it was written; maybe a new one
	// (an abandonment sale's buyer whose order was written and ended meanwhile). Not told to
	// onBought; an abandonment sale's verdict counts them as unclear.
	requeued int64
	// transportErrs are the first distinct errors of requests that got no HTTP answer;
	// timedOut the requests of those cut by the attack's timeout (cutByTimeout).
	transportErrs []string
	timedOut      int64
	// cpuTicks is the CPU time each command of the machine used over the attack, in ticks of
	// userHZ (procSnapshot.usedSince); nil where /proc cannot be read.
	cpuTicks map[string]int64
}

// maxTransportErrs bounds attackResult.transportErrs: enough to tell a reset from a timeout.
const maxTransportErrs = 5

// attack runs spec and consumes every result: live counts for the progress line, lats and
// enc (each when not nil) for a watcher and the vegeta results file. An error of enc ends
// nothing but is returned.
func attack(ctx context.Context, spec attackSpec, live *liveCounts, lats *latencyWindow, enc vegeta.Encoder) (*attackResult, error) {
	sched, pacer, workers, most := spec.plan()
	opts := []func(*vegeta.Attacker){
		vegeta.Workers(uint64(workers)),
		vegeta.MaxWorkers(uint64(most)),
		vegeta.Connections(most), // idle keep-alive connections per host: one per worker
		vegeta.KeepAlive(true),
		vegeta.Timeout(spec.timeout),
		vegeta.MaxBody(4 << 10), // problem bodies are ~200 bytes; keep memory flat
	}
	// Last, as it replaces the client the options above shaped: the deployment's headers and
	// TLS (transport.go), its transport noting each request's buyer with -check.
	opts = append(opts, vegeta.Client(spec.deploy.attackClient(most, spec.timeout, spec.history)))
	atk := vegeta.NewAttacker(opts...)
	res := &attackResult{name: spec.name, model: spec.model, tally: newTally(), saleFrom: spec.saleFrom}
	var sent atomic.Int64
	tr := func(t *vegeta.Target) error {
		err := spec.targeter(t)
		if err == nil && t != nil {
			sent.Add(1)
		}
		return err
	}
	secs := newPerSecond(&sent, sched)
	if spec.beforeStart != nil {
		spec.beforeStart()
	}
	// One epoch for the schedule and every measure, taken once the attack is set up: the pacer
	// runs on it, not on vegeta's own start, which Attack takes later.
	res.began = time.Now()
	if !spec.epoch.IsZero() {
		time.Sleep(time.Until(spec.epoch))
		res.began = spec.epoch
	}
	pacer = epochPacer{Pacer: pacer, epoch: res.began, end: spec.duration}
	var stoppedAt atomic.Int64 // when we stopped the attack, since it began; 0: we did not
	stop := func() {
		stoppedAt.CompareAndSwap(0, int64(time.Since(res.began)))
		atk.Stop()
	}
	stopOnCancel := context.AfterFunc(ctx, stop)
	defer stopOnCancel()
	stopTicks := secs.tick(res.began)
	var (
		encErr    error
		lastSent  time.Duration // the latest send, since the epoch
		soldTimer *time.Timer
		admitted  = map[int64]Outcome{} // each buyer's last admitting answer, from their bodies
	)
	for r := range atk.Attack(tr, pacer, spec.duration, spec.name) {
		o := classify(r)
		if o == noTarget {
			res.excluded++
			continue
		}
		if o == TransportError && len(res.transportErrs) < maxTransportErrs && !slices.Contains(res.transportErrs, r.Error) {
			res.transportErrs = append(res.transportErrs, r.Error)
		}
		if cutByTimeout(r, o, spec.timeout) {
			res.timedOut++
		}
		if spec.history != nil {
			spec.history.add(r, o)
		}
		live.add(o, r.Timestamp.Add(r.Latency))
		lats.add(r.Latency)
		res.counts[o]++
		if o.admits() {
			if u := answerUser(r.Body); u > 0 {
				last, seen := admitted[u]
				admitted[u] = o
				if seen {
					res.readmitted++
				}
				switch {
				case seen && last == Accepted && o == Accepted:
					res.requeued++
				case spec.onBought != nil:
					spec.onBought(u, o == Accepted)
				}
			}
		}
		res.metrics.Add(r)
		at, corrected := r.Timestamp.Sub(res.began), r.Latency
		lastSent = max(lastSent, at)
		if sched != nil {
			corrected = res.arrived(*sched, r.Seq, at, r.Latency)
		}
		res.tally.add(at, r.Latency, corrected, o)
		secs.add(r.Latency, corrected, o)
		res.arrivals.MaxInFlight = max(res.arrivals.MaxInFlight, sent.Load()-res.tally.n)
		if spec.keepSamples {
			res.samples = append(res.samples, sample{seq: r.Seq, at: at, lat: r.Latency, out: o})
		}
		if enc != nil && encErr == nil {
			if err := enc.Encode(r); err != nil {
				encErr = fmt.Errorf("write results: %w", err)
			}
		}
		if o == SoldOut && spec.afterSold > 0 && soldTimer == nil {
			soldTimer = time.AfterFunc(spec.afterSold, stop)
		}
	}
	if soldTimer != nil {
		soldTimer.Stop()
	}
	stopTicks()
	res.seconds = secs.rows
	res.metrics.Close()
	res.arrivals.Sent = sent.Load()
	if sched != nil {
		end := spec.duration
		if s := time.Duration(stoppedAt.Load()); s > 0 {
			end = min(end, s)
		}
		res.settleArrivals(*sched, end, lastSent, spec.requests)
	}
	if sched == nil && res.tally.n > 0 && res.tally.last > res.tally.first {
		// Each worker sent once every workers/throughput on average: the interval of the
		// after-the-fact correction.
		res.correctedAfter = time.Duration(float64(spec.workers) * float64(res.tally.last-res.tally.first) / float64(res.tally.n))
		res.tally.corrected = correctedCopy(res.tally.raw, res.correctedAfter)
	}
	slices.SortFunc(res.samples, func(a, b sample) int { return cmpUint(a.seq, b.seq) })
	return res, encErr
}

// answerUser reads the user_id of a 201 (order) or 202 (accepted) body; 0 when it has none.
// Admitting answers are at most about the stock, so decoding them costs little.
func answerUser(body []byte) int64 {
	var b struct {
		UserID int64 `json:"user_id"`
	}
	if json.Unmarshal(body, &b) != nil {
		return 0
	}
	return b.UserID
}

// answerOrder reads the order an answer names: a 201's order id, a 409 already_purchased's
// order_id; 0 for none (a 202 names the lookup's path, not an id). The history records it
// (history.Purchase.Order), and its page shows it.
func answerOrder(body []byte) int64 {
	var b struct {
		ID      int64 `json:"id"`
		OrderID int64 `json:"order_id"`
	}
	if json.Unmarshal(body, &b) != nil {
		return 0
	}
	return max(b.ID, b.OrderID)
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
