package loadgen

import (
	"fmt"
	"slices"
	"time"
)

// Latencies are in milliseconds.
type Latencies struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// RunStats are the figures of one attack.
type RunStats struct {
	Requests int64   `json:"requests"`
	Seconds  float64 `json:"seconds"` // first request sent to last answer received
	// Throughput is answers of any outcome per second over Seconds.
	Throughput float64 `json:"throughput"`
	// Model is the load model that ran: open or closed (docs/loadtest.md, "Load models").
	Model string `json:"model"`
	// Started is when the first request was sent.
	Started time.Time `json:"started"`
	// Latency runs from each send; LatencyCorrected from when it was due (docs/loadtest.md#latency).
	Latency          Latencies `json:"latency_ms"`
	LatencyCorrected Latencies `json:"latency_corrected_ms"`
	Correction       string    `json:"latency_correction"`
	// Arrivals are how the requests kept to their schedule.
	Arrivals ArrivalStats `json:"arrivals"`
	// Histograms are the latency histograms, which loadtest merge adds up.
	Histograms Histograms           `json:"histograms"`
	ByOutcome  map[string]Latencies `json:"latency_ms_by_outcome"`
	Outcomes   Counts               `json:"outcomes"`
	// Readmitted are admitting answers to buyers already admitted.
	Readmitted int64 `json:"readmitted"`
	// Requeued are 202 answers to a buyer whose last admitting answer was a 202.
	Requeued int64 `json:"requeued,omitempty"`
	// SellSeconds runs to the last admitting answer from the first send (an opening's: from
	// T0); OrdersPerSec is the buyers over it.
	SellSeconds  float64 `json:"sell_seconds"`
	OrdersPerSec float64 `json:"orders_per_sec"`
	// Rejections are sold_out answers after the last admitting one, over RejectSeconds.
	Rejections       int64          `json:"rejections"`
	RejectSeconds    float64        `json:"reject_seconds"`
	RejectionsPerSec float64        `json:"rejections_per_sec"`
	StatusCodes      map[string]int `json:"status_codes"`
	// TransportErrors are the first five distinct errors of requests with no answer.
	TransportErrors []string `json:"transport_errors,omitempty"`
	// TimedOut are the requests -timeout cut, counted at the timeout.
	TimedOut         int64 `json:"timed_out,omitempty"`
	ExcludedNoTarget int64 `json:"excluded_no_target"`
	// Inversions are sold_out answers to requests sent over labrun.InversionSlack before one
	// that bought; InversionShare is their share.
	Inversions     int64   `json:"inversions"`
	InversionShare float64 `json:"inversion_share"`
	// CPUTicks is each command's CPU time over the attack, in 1/100 s; absent without /proc.
	CPUTicks map[string]int64 `json:"cpu_ticks_by_command,omitempty"`
}

// ArrivalStats are how a run's requests kept to their schedule (docs/loadtest.md#load-models).
type ArrivalStats struct {
	Scheduled int64 `json:"scheduled,omitempty"` // with a schedule: requests due before the attack ended
	Sent      int64 `json:"sent"`
	Delayed   int64 `json:"delayed"` // sent more than delaySlack (10 ms) after they were due
	Dropped   int64 `json:"dropped"` // with a schedule: due, never sent
	// MaxLagMS is the worst send lag; MaxInFlight the most requests in flight.
	MaxLagMS    float64 `json:"max_lag_ms"`
	MaxInFlight int64   `json:"max_in_flight"`
}

// Answered is the number of requests that got an HTTP answer.
func (st RunStats) Answered() int64 { return st.Requests - st.Outcomes[TransportError] }

// summarize turns an attack result into its figures.
func summarize(res *attackResult) RunStats {
	m, t := &res.metrics, res.tally
	st := RunStats{
		Model:            res.model,
		Requests:         int64(m.Requests),
		Outcomes:         res.counts,
		StatusCodes:      m.StatusCodes,
		TransportErrors:  res.transportErrs,
		TimedOut:         res.timedOut,
		CPUTicks:         res.cpuTicks,
		ExcludedNoTarget: res.excluded,
		Readmitted:       res.readmitted,
		Requeued:         res.requeued,
		ByOutcome:        map[string]Latencies{},
		Latency:          latenciesOf(t.raw),
		LatencyCorrected: atLeast(latenciesOf(t.corrected), latenciesOf(t.raw)),
		Correction:       correction(res),
		Arrivals:         res.arrivals,
		Histograms:       t.histograms(),
	}
	if t.n == 0 {
		return st
	}
	for o, h := range t.byOutcome {
		if h != nil {
			st.ByOutcome[Outcome(o).String()] = latenciesOf(h)
		}
	}
	st.Started = res.began.Add(t.first).UTC()
	st.Seconds = (t.last - t.first).Seconds()
	if st.Seconds > 0 {
		st.Throughput = float64(st.Requests) / st.Seconds
	}
	sellEnd := t.sellEnd
	if n := st.Buyers(); n > 0 {
		st.SellSeconds = (sellEnd - max(t.first, res.saleFrom)).Seconds()
		if st.SellSeconds > 0 {
			st.OrdersPerSec = float64(n) / st.SellSeconds
		}
	} else {
		sellEnd = t.first
	}
	// The sold_out send times are kept to the millisecond: those of sellEnd's millisecond
	// count as after it.
	sellEndAt := sellEnd.Truncate(time.Millisecond)
	st.Rejections = t.soldOutWhere(func(ms time.Duration) bool { return ms >= sellEndAt })
	st.RejectSeconds = (t.last - sellEnd).Seconds()
	// A handful of rejections in a sliver of time says nothing about throughput.
	if st.Rejections >= 20 && st.RejectSeconds >= 0.2 {
		st.RejectionsPerSec = float64(st.Rejections) / st.RejectSeconds
	}
	st.Inversions, st.InversionShare = t.inversions()
	return st
}

// correction says how the corrected latencies of res were measured.
func correction(res *attackResult) string {
	unsent := ""
	if n := res.arrivals.Dropped; n > 0 {
		unsent = fmt.Sprintf("; %d arrivals never sent counted at their wait until the attack stopped sending", n)
	}
	switch {
	case res.model == ModelOpen:
		return "open: from each request's scheduled arrival, so already free of coordinated omission (raw: from its send)" + unsent
	case res.correctedAfter > 0:
		return fmt.Sprintf("closed, unpaced: estimated after the fact (HdrHistogram's correction, one request per worker expected every %s); give -rate for a schedule",
			res.correctedAfter.Round(10*time.Microsecond))
	case res.tally.n > 0 && res.tally.raw.TotalCount() > 0 && res.model == ModelClosed:
		return "closed, paced as wrk2: from each request's place in the schedule, not from its send" + unsent
	}
	return ""
}

// atLeast is each figure of c, raised to r's where r's is higher. A request's corrected latency
// is never below its raw one, but the after-the-fact estimate of an unpaced closed run adds
// values below the ones it corrects and may lower a percentile; a corrected figure is never
// reported below the raw one.
func atLeast(c, r Latencies) Latencies {
	return Latencies{Mean: max(c.Mean, r.Mean), P50: max(c.P50, r.P50), P90: max(c.P90, r.P90), P99: max(c.P99, r.P99), Max: max(c.Max, r.Max)}
}

// P99 and P99Corrected are st's raw and corrected p99 latencies: what a threshold reads.
func (st RunStats) P99() time.Duration { return msDuration(st.Latency.P99) }
func (st RunStats) P99Corrected() time.Duration {
	return msDuration(st.LatencyCorrected.P99)
}

func msDuration(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }

// Buyers returns the buyers admitted (201 or 202), each once.
func (st RunStats) Buyers() int64 { return st.Outcomes.Admitted() - st.Readmitted }

// exactLatencies sorts lats (in place) and reads its quantiles: the live page's window.
func exactLatencies(lats []time.Duration) Latencies {
	slices.Sort(lats)
	var total time.Duration
	for _, l := range lats {
		total += l
	}
	q := func(p float64) float64 { return ms(lats[int(p*float64(len(lats)-1)+0.5)]) }
	return Latencies{
		Mean: ms(total / time.Duration(len(lats))), P50: q(0.50), P90: q(0.90), P99: q(0.99), Max: ms(lats[len(lats)-1]),
	}
}
