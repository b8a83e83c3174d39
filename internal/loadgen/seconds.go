package loadgen

import (
	"encoding/csv"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// secondRow is one second of an attack, as -csv writes it.
type secondRow struct {
	At  time.Duration // the end of the second, since the attack began (the last row may be shorter)
	Due int64         // arrivals the schedule made due in the second; -1 without a schedule
	// Sent are the requests sent in the second; the answers received in it by class: admitted
	// (bought, accepted), sold_out, refused (already_purchased, busy, rate_limited), errors.
	Sent, Admitted, SoldOut, Refused, Errors int64
	// P50 and P99 of the latencies of the answers received in the second, in ms; P99Corrected
	// from their intended starts, -1 without a schedule (closed, unpaced).
	P50, P99, P99Corrected float64
	InFlight               int64 // sent and not yet answered at the end of the second
}

// perSecond collects the rows of an attack: the attack loop adds each answer, a ticker closes
// a row every second. It is safe for concurrent use; its memory is one row a second.
type perSecond struct {
	mu             sync.Mutex
	raw, corrected *hdrhistogram.Histogram
	counts         Counts
	sent           *atomic.Int64 // requests sent so far, counted as the targeter hands them out
	answered       int64
	prevSent       int64
	prevDue        float64
	prevAt         time.Duration
	sched          *schedule // nil: no schedule
	rows           []secondRow
}

func newPerSecond(sent *atomic.Int64, sched *schedule) *perSecond {
	return &perSecond{raw: newHist(), corrected: newHist(), sent: sent, sched: sched}
}

func (p *perSecond) add(lat, corrected time.Duration, o Outcome) {
	p.mu.Lock()
	record(p.raw, lat)
	record(p.corrected, max(lat, corrected))
	if o < NumOutcomes {
		p.counts[o]++
	}
	p.answered++
	p.mu.Unlock()
}

// close ends the row at at, since the attack began.
func (p *perSecond) close(at time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if at <= p.prevAt {
		return
	}
	sent := p.sent.Load()
	c := p.counts
	r := secondRow{At: at, Due: -1, Sent: sent - p.prevSent, Admitted: c.Admitted(), SoldOut: c[SoldOut],
		Refused: c[AlreadyPurchased] + c[Busy] + c[RateLimited] + c[SaleNotStarted] + c[SaleEnded], Errors: c.Errors(), InFlight: sent - p.answered,
		P50: latenciesOf(p.raw).P50, P99: latenciesOf(p.raw).P99, P99Corrected: -1}
	if p.sched != nil {
		due := p.sched.count(at)
		r.Due = int64(due+0.5) - int64(p.prevDue+0.5)
		r.P99Corrected = latenciesOf(p.corrected).P99
		p.prevDue = due
	}
	p.rows = append(p.rows, r)
	p.prevSent, p.prevAt, p.counts = sent, at, Counts{}
	p.raw.Reset()
	p.corrected.Reset()
}

// tick closes a row every second after began until stop is called, which closes the last.
func (p *perSecond) tick(began time.Time) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				p.close(now.Sub(began))
			}
		}
	}()
	return func() {
		close(done)
		<-exited
		p.close(time.Since(began))
	}
}

// csvHeader names the columns of -csv.
var csvHeader = []string{"attack", "second", "due", "sent", "admitted", "sold_out", "refused", "errors",
	"p50_ms", "p99_ms", "p99_corrected_ms", "in_flight"}

// writeCSV writes the rows of attack name, without the header.
func writeCSV(w *csv.Writer, name string, rows []secondRow) error {
	f := func(v float64) string {
		if v < 0 {
			return ""
		}
		return strconv.FormatFloat(v, 'f', 3, 64)
	}
	i := func(v int64) string {
		if v < 0 {
			return ""
		}
		return strconv.FormatInt(v, 10)
	}
	for _, r := range rows {
		rec := []string{name, strconv.FormatFloat(r.At.Seconds(), 'f', 3, 64), i(r.Due), i(r.Sent), i(r.Admitted),
			i(r.SoldOut), i(r.Refused), i(r.Errors), f(r.P50), f(r.P99), f(r.P99Corrected), i(r.InFlight)}
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	w.Flush()
	return w.Error()
}

// newCSV returns a CSV writer on w that has written the header.
func newCSV(w io.Writer) (*csv.Writer, error) {
	c := csv.NewWriter(w)
	if err := c.Write(csvHeader); err != nil {
		return nil, err
	}
	return c, nil
}
