package loadgen

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// openingLog keeps every answer of an opening (a few bytes each, at most -early-hits+1 per
// buyer): its buyer, when it was sent and when it was due, on T0, its latency and outcome.
// The purchaseLog feeds it under its lock.
type openingLog struct {
	plan  openingPlan
	sched schedule
	recs  []openingRec
}

type openingRec struct {
	user         int64
	at, due, lat time.Duration // since T0: sent, due; latency from the send
	o            Outcome
}

func newOpeningLog(p openingPlan) *openingLog {
	return &openingLog{plan: p, sched: newSchedule(0, p.stages)}
}

// add records the answer to request seq of user, sent at sent.
func (l *openingLog) add(user int64, seq uint64, sent time.Time, lat time.Duration, o Outcome) {
	due, ok := l.sched.at(seq)
	rec := openingRec{user: user, at: sent.Sub(l.plan.t0), due: due - l.plan.t0At(), lat: lat, o: o}
	if !ok { // a line's purchase after the burst: due when sent
		rec.due = rec.at
	}
	l.recs = append(l.recs, rec)
}

// OpeningReport is what an opening measured (docs/loadtest.md#the-opening): how the crowd
// was sent against the target, the answers before T0 and in the first second, the time to
// sell out, what PostgreSQL's orders say of T0, and whether arriving early paid.
type OpeningReport struct {
	StartsAt time.Time `json:"starts_at"` // T0: the product's starts_at
	// The target: Buyers within WindowMS from T0, EarlyBuyers of them hammering before.
	Buyers      int     `json:"buyers"`
	WindowMS    float64 `json:"window_ms"`
	EarlyBuyers int     `json:"early_buyers"`
	// Early are the answers to the requests sent before T0, by outcome.
	Early Counts `json:"early"`
	// Burst is what was sent from T0 on: how many, the first and last send since T0 (ms),
	// the spread between them and the rate it makes, against the target's.
	Burst struct {
		Sent         int64   `json:"sent"`
		FirstMS      float64 `json:"first_ms"`
		LastMS       float64 `json:"last_ms"`
		SpreadMS     float64 `json:"spread_ms"`
		Rate         float64 `json:"rate_per_sec"`
		TargetRate   float64 `json:"target_rate_per_sec"`
		MaxLateMS    float64 `json:"max_late_ms"` // the latest send after its due time
		Unsent       int64   `json:"unsent"`      // burst arrivals never sent (bounded by -duration)
		AnsweredByMS float64 `json:"answered_by_ms"`
	} `json:"burst"`
	// SellOutMS is T0 to the last admitting answer, when the stock sold out; nil otherwise.
	SellOutMS *float64 `json:"sell_out_ms"`
	Admitted  int64    `json:"admitted"` // answers 201 or 202
	// FirstSecond are the answers that arrived in [T0, T0+1s), by outcome, with their
	// latencies from the send and from when they were due.
	FirstSecond struct {
		Outcomes    Counts    `json:"outcomes"`
		Latency     Latencies `json:"latency_ms"`
		FromDue     Latencies `json:"latency_from_due_ms"`
		Outstanding int64     `json:"outstanding"` // sent by T0+1s, answered after it
	} `json:"first_second"`
	// AdmittedBeforeT0 are admitting answers that arrived before T0: each one a sale before
	// the start, as loadtest's clock sees it.
	AdmittedBeforeT0 int64 `json:"admitted_before_t0"`
	// Orders are PostgreSQL's view (created_at, its clock); nil without the direct audit.
	Orders   *OpeningOrders `json:"orders,omitempty"`
	Fairness Fairness       `json:"fairness"`
}

// OpeningOrders are the product's orders in PostgreSQL against its starts_at.
type OpeningOrders struct {
	Count       int64   `json:"count"`
	BeforeStart int64   `json:"before_start"` // created_at before starts_at
	FirstMS     float64 `json:"first_ms"`     // the first order's created_at - starts_at
	LastMS      float64 `json:"last_ms"`
}

// Fairness compares the buyers who sent before T0 with those who came at T0: with a plain
// window, early requests are refused, not queued, so both should win alike.
type Fairness struct {
	Early  GroupWins `json:"early"`
	OnTime GroupWins `json:"on_time"`
	// PreQueue says whether the pre-queue was measured: without a line, a note.
	PreQueue string `json:"pre_queue"`
	// Line is the order of an opening through a line; nil without one.
	Line *LineFairness `json:"line,omitempty"`
}

// GroupWins is how many buyers of a group won a unit (an admitting answer).
type GroupWins struct {
	Buyers int64   `json:"buyers"`
	Won    int64   `json:"won"`
	Share  float64 `json:"share"`
}

// preQueueNote is Fairness.PreQueue of an opening without a line (one with a line reports it apart).
const preQueueNote = "not measured: this opening ran without a line (-line-rate); before T0 every request is refused (sale_not_started) and none keeps a place"

// report sums up the log of an opening of stock units.
func (l *openingLog) report(stock int64) *OpeningReport {
	o := l.plan.o
	r := &OpeningReport{StartsAt: l.plan.t0.UTC(), Buyers: o.Burst, WindowMS: ms(o.Window), EarlyBuyers: o.earlyBuyers()}
	r.Burst.TargetRate = float64(o.Burst) / o.Window.Seconds()
	r.Fairness.PreQueue = preQueueNote
	type buyer struct{ early, won bool }
	buyers := map[int64]*buyer{}
	var first1, fromDue1 []time.Duration
	var lastAdmit time.Duration
	for _, x := range l.recs {
		b := buyers[x.user]
		if b == nil {
			// Through a line the early buyers' joins are not purchases: they are the first ids.
			b = &buyer{early: o.LineRate > 0 && x.user-l.plan.first < int64(o.earlyBuyers())}
			buyers[x.user] = b
		}
		end := x.at + x.lat
		if x.at < 0 {
			b.early = true // a request before T0 (never through a line)
			r.Early[x.o]++
		} else {
			if r.Burst.Sent == 0 || ms(x.at) < r.Burst.FirstMS {
				r.Burst.FirstMS = ms(x.at)
			}
			r.Burst.Sent++
			r.Burst.LastMS = max(r.Burst.LastMS, ms(x.at))
			r.Burst.MaxLateMS = max(r.Burst.MaxLateMS, ms(x.at-x.due))
			r.Burst.AnsweredByMS = max(r.Burst.AnsweredByMS, ms(end))
		}
		if x.o.admits() {
			b.won = true
			r.Admitted++
			lastAdmit = max(lastAdmit, end)
			if end < 0 {
				r.AdmittedBeforeT0++
			}
		}
		switch {
		case end >= 0 && end < time.Second:
			r.FirstSecond.Outcomes[x.o]++
			first1 = append(first1, x.lat)
			fromDue1 = append(fromDue1, end-min(x.due, x.at))
		case x.at < time.Second && end >= time.Second:
			r.FirstSecond.Outstanding++
		}
	}
	r.Burst.SpreadMS = r.Burst.LastMS - r.Burst.FirstMS
	if r.Burst.SpreadMS > 0 {
		r.Burst.Rate = float64(r.Burst.Sent) / (r.Burst.SpreadMS / 1000)
	}
	r.Burst.Unsent = max(0, int64(o.Burst)-r.Burst.Sent)
	if len(first1) > 0 {
		r.FirstSecond.Latency, r.FirstSecond.FromDue = exactLatencies(first1), exactLatencies(fromDue1)
	}
	if r.Admitted >= stock && stock > 0 {
		r.SellOutMS = new(ms(lastAdmit))
	}
	for _, b := range buyers {
		g := &r.Fairness.OnTime
		if b.early {
			g = &r.Fairness.Early
		}
		g.Buyers++
		if b.won {
			g.Won++
		}
	}
	for _, g := range []*GroupWins{&r.Fairness.Early, &r.Fairness.OnTime} {
		if g.Buyers > 0 {
			g.Share = float64(g.Won) / float64(g.Buyers)
		}
	}
	return r
}

// judgeOpening adds to v what the opening r of stock units broke: a unit admitted before
// T0, an order created before starts_at, more units admitted than the stock (a safe
// strategy only), a burst of which nothing was sent.
func judgeOpening(v *verdict, strategy string, stock int64, r *OpeningReport) {
	if r == nil {
		return
	}
	var problems []string
	if r.AdmittedBeforeT0 > 0 {
		problems = append(problems, fmt.Sprintf("opening: %d units admitted before T0 (answers that arrived before starts_at)", r.AdmittedBeforeT0))
	}
	if x := r.Orders; x != nil && x.BeforeStart > 0 {
		problems = append(problems, fmt.Sprintf("opening: %d orders created before starts_at (PostgreSQL's created_at)", x.BeforeStart))
	}
	if IsSafe(strategy) && r.Admitted > stock {
		problems = append(problems, fmt.Sprintf("opening: %d buyers admitted of a stock of %d", r.Admitted, stock))
	}
	if r.Burst.Sent == 0 {
		problems = append(problems, "opening: no purchase was sent from T0 on")
	}
	problems = append(problems, judgeLine(r.Fairness.Line)...)
	if len(problems) > 0 {
		v.Problems = append(v.Problems, problems...)
		v.OK, v.Label = false, "FAIL"
	}
}

// print writes r below a run's report.
func (r *OpeningReport) print(w io.Writer) {
	b := r.Burst
	fmt.Fprintf(w, "opening       T0 %s: %d buyers within %s targeted (%.0f/s); sent %d from T0+%s to T0+%s: spread %s, %.0f/s achieved, latest %s after its due time, %d never sent\n",
		r.StartsAt.Format("15:04:05.000"), r.Buyers, fmtMS(r.WindowMS), b.TargetRate, b.Sent, fmtMS(b.FirstMS), fmtMS(b.LastMS),
		fmtMS(b.SpreadMS), b.Rate, fmtMS(b.MaxLateMS), b.Unsent)
	if r.Fairness.Line != nil {
		fmt.Fprintf(w, "before T0     %d early buyers joined the line many times, the others once: see line\n", r.EarlyBuyers)
	} else {
		fmt.Fprintf(w, "before T0     %d requests from %d early buyers: %s\n", r.Early.Total(), r.EarlyBuyers, outcomeList(r.Early))
	}
	sell := "not sold out"
	if r.SellOutMS != nil {
		sell = "T0+" + fmtMS(*r.SellOutMS) + " to the last admitting answer received"
	}
	fmt.Fprintf(w, "sell-out      %s; %d admitted, %d before T0\n", sell, r.Admitted, r.AdmittedBeforeT0)
	if x := r.Orders; x != nil {
		fmt.Fprintf(w, "orders        %d in PostgreSQL, created_at from starts_at+%s to +%s (PostgreSQL's clock), %d before starts_at\n",
			x.Count, fmtMS(x.FirstMS), fmtMS(x.LastMS), x.BeforeStart)
	}
	f := r.FirstSecond
	fmt.Fprintf(w, "first second  %d answers: %s; p50 %s p99 %s (from due: p50 %s p99 %s); %d sent and answered after it\n",
		f.Outcomes.Total(), outcomeList(f.Outcomes), fmtMS(f.Latency.P50), fmtMS(f.Latency.P99), fmtMS(f.FromDue.P50), fmtMS(f.FromDue.P99), f.Outstanding)
	e, t := r.Fairness.Early, r.Fairness.OnTime
	fmt.Fprintf(w, "early vs T0   early hammerers %d: %d won (%.2f%%); at T0 only %d: %d won (%.2f%%); pre-queue %s\n",
		e.Buyers, e.Won, 100*e.Share, t.Buyers, t.Won, 100*t.Share, r.Fairness.PreQueue)
	r.Fairness.Line.print(w)
}

// outcomeList is "name n, ..." of the outcomes counted in c, or "none".
func outcomeList(c Counts) string {
	var parts []string
	for o, n := range c {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", Outcome(o), n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// openingOrders reads product id's orders in PostgreSQL against its starts_at; nil, nil
// without the direct audit.
func (a *auditor) openingOrders(ctx context.Context, id int64) (*OpeningOrders, error) {
	if a.pg == nil || a.direct == nil {
		return nil, nil
	}
	var x OpeningOrders
	err := a.pg.QueryRowContext(ctx, `
		SELECT count(o.id), count(o.id) FILTER (WHERE o.created_at < p.starts_at),
		       COALESCE(EXTRACT(EPOCH FROM min(o.created_at) - p.starts_at) * 1000, 0)::float8,
		       COALESCE(EXTRACT(EPOCH FROM max(o.created_at) - p.starts_at) * 1000, 0)::float8
		FROM products p LEFT JOIN orders o ON o.product_id = p.id
		WHERE p.id = $1 GROUP BY p.starts_at`, id).Scan(&x.Count, &x.BeforeStart, &x.FirstMS, &x.LastMS)
	if err != nil {
		return nil, fmt.Errorf("orders of product %d against its starts_at: %w", id, err)
	}
	return &x, nil
}
