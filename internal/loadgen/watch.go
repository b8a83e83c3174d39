package loadgen

import (
	"bytes"
	"context"
	"sync"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/seckill/seckill/internal/api/client"
)

// Observer is told of an attack as it goes (loadtest ui); its methods must be concurrency-safe.
type Observer interface {
	ItemBegan(name string, initialStock int64, safe bool)
	ItemSampled(s LiveSample)
	ItemDone(r RunReport)
}

// watchInterval is how often loadtest ui samples an attack; lockInterval how often the
// targets' /metrics are read for the lock figures.
const (
	watchInterval = 250 * time.Millisecond
	lockInterval  = time.Second
)

// LiveSample is one look at a running attack: OrdersPerSec as SellPace gives it, rates and
// latencies since the last look, lock figures since the start (nil when unknown).
type LiveSample struct {
	Name          string           `json:"name"`
	MS            int64            `json:"ms"`
	Orders        int64            `json:"orders"` // answers 201 or 202 (admitted buyers)
	Stock         *int64           `json:"stock"`
	Requests      int64            `json:"requests"`
	Outcomes      map[string]int64 `json:"outcomes"`
	OrdersPerSec  *float64         `json:"orders_per_sec"`
	PaceWindowMS  *int64           `json:"pace_window_ms"`
	AnswersPerSec *float64         `json:"answers_per_sec"`
	P50           *float64         `json:"p50_ms"`
	P99           *float64         `json:"p99_ms"`
	Lock          *lockFigures     `json:"lock"`
	// Reservations are an abandonment sale's figures so far (lifecycle.live); nil otherwise.
	Reservations *LifecycleSecond `json:"reservations,omitempty"`
	// T0MS is an opening's T0 on MS's clock (since the watch began); nil for a sale without
	// a start.
	T0MS   *int64 `json:"t0_ms,omitempty"`
	counts Counts // the answers so far, for the progress line
}

// latencyWindow collects the latencies of the answers since it was last taken. It is safe
// for concurrent use; a nil window collects nothing.
type latencyWindow struct {
	mu   sync.Mutex
	lats []time.Duration
}

func (w *latencyWindow) add(d time.Duration) {
	if w != nil {
		w.mu.Lock()
		w.lats = append(w.lats, d)
		w.mu.Unlock()
	}
}

func (w *latencyWindow) take() []time.Duration {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.lats
	w.lats = nil
	return l
}

// watch says what follow samples, how often, and where each sample goes.
type watch struct {
	name     string
	interval time.Duration
	live     *liveCounts
	lats     *latencyWindow                       // nil: no latencies
	stock    func(context.Context) (int64, error) // nil: no stock
	locks    *lockMeter                           // nil: no lock figures
	lc       *lifecycle                           // nil: no abandonment sale
	opensAt  *time.Time                           // an opening's T0; nil: none
	emit     func(LiveSample)
}

// follow samples an attack every w.interval until stop is called: its answers (live, lats)
// and the stock left; and, every lockInterval on a goroutine of its own (a slow /metrics
// must not hold the samples back), the lock figures of the targets. stop takes a last
// sample, with fresh lock figures, so that the last one shows the whole attack. The progress
// line and loadtest ui's live page both draw from it.
func follow(ctx context.Context, w watch) (stop func()) {
	sctx, cancel := context.WithCancel(ctx)
	began := time.Now()
	var lock atomic.Pointer[lockFigures]
	readLock := func(ctx context.Context) {
		if w.locks != nil {
			ctx, cancel := context.WithTimeout(ctx, lockInterval)
			lock.Store(w.locks.read(ctx))
			cancel()
		}
	}
	prev, prevAt := Counts{}, began
	saleBegan := began // the pace runs from the sale's start: an opening's T0
	if w.opensAt != nil && w.opensAt.After(began) {
		saleBegan = *w.opensAt
	}
	var pace SellPace
	look := func(ctx context.Context, final bool) {
		now, c := time.Now(), w.live.snapshot()
		s := LiveSample{Name: w.name, MS: now.Sub(began).Milliseconds(), Orders: c.Admitted(), Requests: c.Total(),
			Outcomes: map[string]int64{
				"bought": c[Bought], "accepted": c[Accepted], "sold_out": c[SoldOut], "already_purchased": c[AlreadyPurchased],
				"busy": c[Busy], "rate_limited": c[RateLimited], "sale_not_started": c[SaleNotStarted],
				"sale_ended": c[SaleEnded], "not_your_turn": c[NotYourTurn], "place_expired": c[PlaceExpired],
				"errors": c.Errors(),
			}, Lock: lock.Load(), Reservations: w.lc.live(), counts: c}
		if w.opensAt != nil {
			s.T0MS = new(w.opensAt.Sub(began).Milliseconds())
		}
		if secs := now.Sub(prevAt).Seconds(); c.Total() > prev.Total() && secs > 0 {
			s.AnswersPerSec = new(float64(c.Total()-prev.Total()) / secs)
		}
		if l := w.lats.take(); len(l) > 0 {
			q := exactLatencies(l)
			s.P50, s.P99 = &q.P50, &q.P99
		}
		if w.stock != nil {
			ctx, cancel := context.WithTimeout(ctx, min(w.interval, time.Second))
			if n, err := w.stock(ctx); err == nil {
				s.Stock = &n
			}
			cancel()
		}
		// Still selling unless the attack is over or the stock is known to be gone.
		selling := !final && (s.Stock == nil || *s.Stock > 0)
		if at := w.live.lastAdmitted(); !at.IsZero() {
			pace.LastOrderAt(at.Sub(saleBegan))
		}
		if p, win := pace.Observe(now.Sub(saleBegan), c.Admitted(), selling); p != nil {
			s.OrdersPerSec, s.PaceWindowMS = p, new(win.Milliseconds())
		}
		prev, prevAt = c, now
		w.emit(s)
	}
	var wg sync.WaitGroup
	if w.locks != nil {
		wg.Go(func() { every(sctx, lockInterval, func() { readLock(sctx) }) })
	}
	wg.Go(func() { every(sctx, w.interval, func() { look(sctx, false) }) })
	return func() {
		cancel()
		wg.Wait()
		last := context.WithoutCancel(ctx) // a stopped run still shows where it stopped
		readLock(last)
		look(last, true)
	}
}

// every calls f every interval until ctx ends.
func every(ctx context.Context, interval time.Duration, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// lockFigures are the lock's figures of an attack, from the targets' /metrics (summed):
// the mean wait to obtain a product lock, attempts that found it held, watchdog renewals,
// locks lost while held, and the mean buyers per group commit. A mean is nil without data.
type lockFigures struct {
	WaitMSMean *float64 `json:"wait_ms_mean"`
	Contended  float64  `json:"contended"`
	Renewals   float64  `json:"renewals"`
	Lost       float64  `json:"lost"`
	BatchMean  *float64 `json:"batch_mean"`
}

// lockMeter reads the lock figures of the targets relative to when it was made.
type lockMeter struct {
	clients []*client.Client
	base    lockTotals
}

// lockTotals are the metrics' running totals, summed over the targets.
type lockTotals struct{ waitSum, waitCount, contended, renewals, lost, batchSum, batchCount float64 }

// newLockMeter reads the /metrics of targets, reached as d says; a scrape that takes longer
// than metricsTimeout is skipped.
func newLockMeter(ctx context.Context, d Deployment, targets []string) *lockMeter {
	m := &lockMeter{}
	hc := d.HTTPClient(0, metricsTimeout, nil)
	for _, t := range targets {
		m.clients = append(m.clients, client.New(t, &client.Options{HTTPClient: hc}))
	}
	m.base, _ = m.totals(ctx)
	return m
}

const metricsTimeout = 2 * time.Second

// read returns the figures since the meter was made, nil when a target's /metrics failed.
func (m *lockMeter) read(ctx context.Context) *lockFigures {
	t, ok := m.totals(ctx)
	if !ok {
		return nil
	}
	b := m.base
	f := &lockFigures{Contended: t.contended - b.contended, Renewals: t.renewals - b.renewals, Lost: t.lost - b.lost}
	if n := t.waitCount - b.waitCount; n > 0 {
		f.WaitMSMean = new((t.waitSum - b.waitSum) / n * 1000)
	}
	if n := t.batchCount - b.batchCount; n > 0 {
		f.BatchMean = new((t.batchSum - b.batchSum) / n)
	}
	return f
}

func (m *lockMeter) totals(ctx context.Context) (t lockTotals, ok bool) {
	for _, c := range m.clients {
		text, err := c.Metrics(ctx)
		if err != nil {
			return t, false
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := p.TextToMetricFamilies(bytes.NewReader(text))
		if err != nil {
			return t, false
		}
		ws, wc := histogram(fams["seckill_lock_wait_seconds"])
		bs, bc := histogram(fams["seckill_batch_size"])
		t.waitSum, t.waitCount, t.batchSum, t.batchCount = t.waitSum+ws, t.waitCount+wc, t.batchSum+bs, t.batchCount+bc
		t.contended += counter(fams["seckill_lock_contended_total"])
		t.renewals += counter(fams["seckill_lock_renewals_total"])
		t.lost += counter(fams["seckill_lock_lost_total"])
	}
	return t, true
}

// counter is the sum of a counter family's series; histogram the sums and counts of a
// histogram family's. A family that is missing counts 0.
func counter(f *dto.MetricFamily) (v float64) {
	for _, m := range f.GetMetric() {
		v += m.GetCounter().GetValue()
	}
	return v
}

func histogram(f *dto.MetricFamily) (sum, count float64) {
	for _, m := range f.GetMetric() {
		sum += m.GetHistogram().GetSampleSum()
		count += float64(m.GetHistogram().GetSampleCount())
	}
	return sum, count
}
