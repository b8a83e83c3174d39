package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// attackSpec is one bounded attack: it ends at duration or after requests, whichever comes
// first, or afterSold after the first sold_out answer, or when ctx ends.
type attackSpec struct {
	name       string // vegeta's attack name: the strategy, or the baseline's name
	targeter   vegeta.Targeter
	rate       int // requests per second; 0: as fast as workers go
	workers    int
	maxWorkers int // with rate > 0: how many workers vegeta may add
	duration   time.Duration
	requests   uint64
	timeout    time.Duration
	afterSold  time.Duration
}

func specFor(cfg config, name string, tr vegeta.Targeter) attackSpec {
	return attackSpec{
		name: name, targeter: tr, rate: cfg.rate, workers: cfg.workers, maxWorkers: cfg.maxWorkers,
		duration: cfg.duration, requests: cfg.requests, timeout: cfg.timeout, afterSold: cfg.afterSold,
	}
}

// sample is what we keep of one result: enough for per-outcome latencies, the sell-out
// window, and the plot.
type sample struct {
	seq uint64
	at  time.Duration // when the request was sent, since the attack began
	lat time.Duration
	out outcome
}

// attackResult is everything one attack measured; no-target results are not in it.
type attackResult struct {
	name     string
	began    time.Time
	metrics  vegeta.Metrics
	counts   counts
	samples  []sample // in sequence order
	excluded int64    // "no targets" results dropped
	// readmitted are admitting answers (see outcome.admits) to a buyer an earlier one already
	// admitted: the queue strategy answers 202 again while the purchase is still queued.
	readmitted int64
	// transportErrs are the first distinct errors of requests that got no HTTP answer.
	transportErrs []string
	// cpuTicks is the CPU time each command of the machine used over the attack, in ticks of
	// procstat.UserHZ (procSnapshot.usedSince); nil where /proc cannot be read.
	cpuTicks map[string]int64
}

// maxTransportErrs bounds attackResult.transportErrs: enough to tell a reset from a timeout.
const maxTransportErrs = 5

// attack runs spec and consumes every result: live counts for the progress line, lats and
// enc (each when not nil) for a watcher and the vegeta results file. An error of enc ends
// nothing but is returned.
func attack(ctx context.Context, spec attackSpec, live *liveCounts, lats *latencyWindow, enc vegeta.Encoder) (*attackResult, error) {
	// With rate 0 the pool is fixed: exactly spec.workers users at once. With a rate, vegeta
	// adds workers (up to maxWorkers) when the API answers too slowly to hold the rate.
	most := spec.workers
	if spec.rate > 0 {
		most = max(spec.workers, spec.maxWorkers)
	}
	atk := vegeta.NewAttacker(
		vegeta.Workers(uint64(spec.workers)),
		vegeta.MaxWorkers(uint64(most)),
		vegeta.Connections(most), // idle keep-alive connections per host: one per worker
		vegeta.KeepAlive(true),
		vegeta.Timeout(spec.timeout),
		vegeta.MaxBody(4<<10), // problem bodies are ~200 bytes; keep memory flat
	)
	stopOnCancel := context.AfterFunc(ctx, func() { atk.Stop() })
	defer stopOnCancel()

	res := &attackResult{name: spec.name, began: time.Now()}
	var (
		encErr    error
		soldTimer *time.Timer
		admitted  = map[int64]bool{} // buyers of the admitting answers, from their bodies
	)
	for r := range atk.Attack(spec.targeter, newPacer(spec.rate, spec.requests), spec.duration, spec.name) {
		o := classify(r)
		if o == noTarget {
			res.excluded++
			continue
		}
		if o == transportError && len(res.transportErrs) < maxTransportErrs && !slices.Contains(res.transportErrs, r.Error) {
			res.transportErrs = append(res.transportErrs, r.Error)
		}
		live.add(o)
		lats.add(r.Latency)
		res.counts[o]++
		if o.admits() {
			if u := answerUser(r.Body); u > 0 && admitted[u] {
				res.readmitted++
			} else if u > 0 {
				admitted[u] = true
			}
		}
		res.metrics.Add(r)
		res.samples = append(res.samples, sample{seq: r.Seq, at: r.Timestamp.Sub(res.began), lat: r.Latency, out: o})
		if enc != nil && encErr == nil {
			if err := enc.Encode(r); err != nil {
				encErr = fmt.Errorf("write results: %w", err)
			}
		}
		if o == soldOut && spec.afterSold > 0 && soldTimer == nil {
			soldTimer = time.AfterFunc(spec.afterSold, func() { atk.Stop() })
		}
	}
	if soldTimer != nil {
		soldTimer.Stop()
	}
	res.metrics.Close()
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

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// latencies are in milliseconds.
type latencies struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// runStats are the figures of one attack.
type runStats struct {
	Requests int64   `json:"requests"`
	Seconds  float64 `json:"seconds"` // first request sent to last answer received
	// Throughput is answers of any outcome per second over Seconds.
	Throughput float64              `json:"throughput"`
	Latency    latencies            `json:"latency_ms"`
	ByOutcome  map[string]latencies `json:"latency_ms_by_outcome"`
	Outcomes   counts               `json:"outcomes"`
	// Readmitted are admitting answers to buyers already admitted (attackResult.readmitted):
	// answers, but no further order. Buyers (runStats.buyers) leaves them out.
	Readmitted int64 `json:"readmitted"`
	// SellSeconds runs from the first request to the last answer that admitted its buyer
	// (bought or accepted, see outcome.admits); OrdersPerSec is the admitted buyers over it.
	SellSeconds  float64 `json:"sell_seconds"`
	OrdersPerSec float64 `json:"orders_per_sec"`
	// Rejections are sold_out answers to requests sent after the last admitting answer (all
	// of them when nobody was admitted), over RejectSeconds: the sold-out rejection throughput.
	Rejections       int64          `json:"rejections"`
	RejectSeconds    float64        `json:"reject_seconds"`
	RejectionsPerSec float64        `json:"rejections_per_sec"`
	StatusCodes      map[string]int `json:"status_codes"`
	// TransportErrors are the first distinct errors (at most five) of requests that got no
	// HTTP answer (transport_error in Outcomes).
	TransportErrors  []string `json:"transport_errors,omitempty"`
	ExcludedNoTarget int64    `json:"excluded_no_target"`
	// Inversions are sold_out answers to requests sent more than labrun.InversionSlack before a
	// request that bought: buyers served out of the order they came in (see inversions).
	// InversionShare is their share of the bought and sold_out answers to requests sent until
	// the last buyer's.
	Inversions     int64   `json:"inversions"`
	InversionShare float64 `json:"inversion_share"`
	// CPUTicks is the CPU time each command of the machine (API processes, postgres,
	// redis-server, this loadtest...) used over the attack, in ticks of 1/100 s, as
	// /proc/<pid>/stat counts them; absent where /proc cannot be read. Processes that ended
	// during the attack are missed.
	CPUTicks map[string]int64 `json:"cpu_ticks_by_command,omitempty"`
}

// answered is the number of requests that got an HTTP answer.
func (st runStats) answered() int64 { return st.Requests - st.Outcomes[transportError] }

// summarize turns an attack result into its figures.
func summarize(res *attackResult) runStats {
	m := &res.metrics
	st := runStats{
		Requests:         int64(m.Requests),
		Outcomes:         res.counts,
		StatusCodes:      m.StatusCodes,
		TransportErrors:  res.transportErrs,
		CPUTicks:         res.cpuTicks,
		ExcludedNoTarget: res.excluded,
		Readmitted:       res.readmitted,
		ByOutcome:        map[string]latencies{},
		Latency: latencies{
			Mean: ms(m.Latencies.Mean), P50: ms(m.Latencies.P50), P90: ms(m.Latencies.P90),
			P99: ms(m.Latencies.P99), Max: ms(m.Latencies.Max),
		},
	}
	if len(res.samples) == 0 {
		return st
	}
	first, last := res.samples[0].at, time.Duration(0)
	var sellEnd time.Duration
	byOutcome := map[outcome][]time.Duration{}
	for _, s := range res.samples {
		first = min(first, s.at)
		last = max(last, s.at+s.lat)
		if s.out.admits() {
			sellEnd = max(sellEnd, s.at+s.lat)
		}
		byOutcome[s.out] = append(byOutcome[s.out], s.lat)
	}
	for o, lats := range byOutcome {
		st.ByOutcome[o.String()] = exactLatencies(lats)
	}
	st.Seconds = (last - first).Seconds()
	if st.Seconds > 0 {
		st.Throughput = float64(st.Requests) / st.Seconds
	}
	if n := st.buyers(); n > 0 {
		st.SellSeconds = (sellEnd - first).Seconds()
		if st.SellSeconds > 0 {
			st.OrdersPerSec = float64(n) / st.SellSeconds
		}
	} else {
		sellEnd = first
	}
	for _, s := range res.samples {
		if s.out == soldOut && s.at >= sellEnd {
			st.Rejections++
		}
	}
	st.RejectSeconds = (last - sellEnd).Seconds()
	// A handful of rejections in a sliver of time says nothing about throughput.
	if st.Rejections >= 20 && st.RejectSeconds >= 0.2 {
		st.RejectionsPerSec = float64(st.Rejections) / st.RejectSeconds
	}
	st.Inversions, st.InversionShare = inversions(res.samples)
	return st
}

// buyers is the number of buyers the answers admitted: 201 and 202 answers, each buyer once.
// Once the queue has drained, each has exactly one order.
func (st runStats) buyers() int64 { return st.Outcomes.admitted() - st.Readmitted }

// exactLatencies sorts lats (in place) and reads its quantiles.
func exactLatencies(lats []time.Duration) latencies {
	slices.Sort(lats)
	var total time.Duration
	for _, l := range lats {
		total += l
	}
	q := func(p float64) float64 { return ms(lats[int(p*float64(len(lats)-1)+0.5)]) }
	return latencies{
		Mean: ms(total / time.Duration(len(lats))), P50: q(0.50), P90: q(0.90), P99: q(0.99), Max: ms(lats[len(lats)-1]),
	}
}
