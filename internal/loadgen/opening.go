package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/seckill/seckill/internal/api"
)

// ModelOpening is the opening of a sale (docs/loadtest.md#the-opening): a crowd that arrives
// before the product's starts_at and fires at it, an open burst.
const ModelOpening = "opening"

// openingGuard is how long before T0 the early requests stop, so that each is answered
// before the start (sale_not_started) and none races the clock that decides.
const openingGuard = 200 * time.Millisecond

// Opening is an opening (-model opening): each product is created with starts_at In after
// its creation; EarlyShare of the Burst buyers send EarlyHits requests each before it, and at
// T0 every buyer sends one purchase, the arrivals spread evenly over Window (an open burst:
// sent on the clock, whatever the answers).
type Opening struct {
	In         time.Duration // -opening-in
	Burst      int           // -burst: buyers, each one purchase from T0
	Window     time.Duration // -burst-window
	EarlyShare float64       // -early-share: share of the buyers who hammer before T0
	EarlyHits  int           // -early-hits: requests of each early buyer before T0
	// A line (docs/loadtest.md#the-opening-through-a-line): with LineRate > 0 the product
	// has a line called LineRate places a second, each call valid LineWindow; before T0
	// every buyer joins it (the early buyers EarlyHits times, from the first instant), and
	// from T0 each purchases at most LineTries times, following its place.
	LineRate   int           // -line-rate; 0: no line
	LineWindow time.Duration // -line-window
	LineTries  int           // -line-tries
}

// DefaultOpening is the opening of -model opening without its flags.
func DefaultOpening() Opening {
	return Opening{In: 3 * time.Second, Burst: 20_000, Window: 100 * time.Millisecond, EarlyShare: 0.2, EarlyHits: 2,
		LineWindow: 30 * time.Second, LineTries: 4}
}

// earlyBuyers is how many buyers hammer before T0.
func (o Opening) earlyBuyers() int { return int(o.EarlyShare*float64(o.Burst) + 0.5) }

// requests is how many purchases an opening sends at most: the early ones and the burst;
// through a line, the joins are not purchases, and each buyer purchases LineTries times at most.
func (o Opening) requests() int {
	if o.LineRate > 0 {
		return o.Burst * o.LineTries
	}
	return o.earlyBuyers()*o.EarlyHits + o.Burst
}

// validate returns what is wrong with o, an opening bounded by within from T0 (-duration).
func (o Opening) validate(within time.Duration) (errs []error) {
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if o.In < time.Second || o.In > 10*time.Minute {
		bad("-opening-in %s: want 1s to 10m (the crowd arrives in it, before T0)", o.In)
	}
	if o.Burst < 1 || o.Burst > 1_000_000 {
		bad("-burst %d: want 1 to 1000000 buyers", o.Burst)
	}
	if o.Window <= 0 || o.Window > time.Minute {
		bad("-burst-window %s: want more than 0, at most 1m", o.Window)
	}
	if o.EarlyShare < 0 || o.EarlyShare > 1 {
		bad("-early-share %v: want a fraction in [0,1]", o.EarlyShare)
	}
	if o.EarlyHits < 1 || o.EarlyHits > 100 {
		bad("-early-hits %d: want 1 to 100", o.EarlyHits)
	}
	if o.LineRate < 0 || o.LineRate > 1_000_000 {
		bad("-line-rate %d: want 0 (no line) to 1000000 places called a second", o.LineRate)
	}
	if o.LineRate > 0 && (o.LineWindow < time.Second || o.LineWindow > time.Hour) {
		bad("-line-window %s: want 1s to 1h (how long a called place may buy)", o.LineWindow)
	}
	if o.LineRate > 0 && (o.LineTries < 1 || o.LineTries > 20) {
		bad("-line-tries %d: want 1 to 20 purchases a buyer", o.LineTries)
	}
	if within <= o.Window {
		bad("-duration %s: an opening's bound from T0; want more than -burst-window %s", within, o.Window)
	}
	return errs
}

// openingPlan is one opening's schedule on its epoch, which comes before T0: the early
// requests evenly over [0, early), none over the guard, the burst evenly over the window
// from T0. Arrival k of the early ones is due at k/rate; of the burst, at T0 + (j+½)·window/N
// (j from 0), so that none is due before T0 or after the window.
type openingPlan struct {
	o      Opening
	epoch  time.Time
	t0     time.Time
	early  time.Duration // from the epoch until the early requests stop (T0 - guard)
	stages Stages
	line   *lineRun // through a line; nil otherwise
	first  int64    // the first buyer's id: the early buyers come first
}

// newOpeningPlan plans o for a product whose sale starts at t0, its epoch at epoch. An
// epoch too close to t0 for the early requests is an error.
func newOpeningPlan(o Opening, epoch, t0 time.Time) (openingPlan, error) {
	p := openingPlan{o: o, epoch: epoch, t0: t0, early: t0.Sub(epoch) - openingGuard}
	if p.early <= 0 {
		return p, errors.New("the opening's T0 came before its crowd could arrive: raise -opening-in")
	}
	ne := float64(o.earlyBuyers() * o.EarlyHits)
	if o.LineRate > 0 {
		ne = 0 // the early ones join the line, outside the attack
	}
	burst := float64(o.Burst) / o.Window.Seconds()
	if ne == 0 {
		p.stages = Stages{{0, 0}, {p.early + openingGuard, 0}, {0, burst}, {o.Window, burst}}
		return p, nil
	}
	// ne-½ arrivals over the early phase: arrivals 0..ne-1 fall in it, the first at 0.
	early := (ne - 0.5) / p.early.Seconds()
	p.stages = Stages{{0, early}, {p.early, early}, {0, 0}, {openingGuard, 0}, {0, burst}, {o.Window, burst}}
	return p, nil
}

// t0At is T0 on the attack's epoch.
func (p openingPlan) t0At() time.Duration { return p.t0.Sub(p.epoch) }

// openingTargeter returns the purchases of an opening, round-robin over urls: first each
// early buyer's EarlyHits requests, in turns (the early buyers are the first ids from first),
// then one purchase of every buyer, early or not, in an order shuffled by seed. It is safe
// for concurrent use; it runs dry (vegeta.ErrNoTargets) after the last.
func openingTargeter(urls []string, o Opening, first int64, seed uint64, tokens *Tokens) vegeta.Targeter {
	earlyBuyers, ne := int64(o.earlyBuyers()), uint64(o.earlyBuyers()*o.EarlyHits)
	order := rand.New(rand.NewPCG(seed, seed^0x0BE111)).Perm(o.Burst)
	var n atomic.Uint64
	header := http.Header{"Content-Type": []string{"application/json"}}
	return func(t *vegeta.Target) error {
		if t == nil {
			return vegeta.ErrNilTarget
		}
		k := n.Add(1) - 1
		var id int64
		switch {
		case k < ne:
			id = first + int64(k)%earlyBuyers
		case k-ne < uint64(len(order)):
			id = first + int64(order[k-ne])
		default:
			return vegeta.ErrNoTargets
		}
		t.Method = http.MethodPost
		t.URL = urls[k%uint64(len(urls))]
		t.Body = append(strconv.AppendInt([]byte(`{"user_id":`), id, 10), '}')
		t.Header = header
		if tokens != nil {
			jwt, err := tokens.Token(context.Background(), id)
			if err != nil {
				return err
			}
			t.Header = http.Header{"Content-Type": header["Content-Type"], "Authorization": []string{"Bearer " + jwt}}
		}
		return nil
	}
}

// validateOpening validates an opening's configuration: its flags, and none of those it
// cannot go with.
func (c *Config) validateOpening() []error {
	errs := c.Opening.validate(c.Duration)
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if len(c.Stages) > 0 {
		bad("-stages: an opening's arrivals are -burst within -burst-window; no stages")
	}
	if c.Deploy.Product != 0 {
		bad("-product: an opening creates its product, with its starts_at")
	}
	if c.Abandon.On() {
		bad("-pay-within: an opening is an ordinary sale")
	}
	if c.Baseline {
		bad("-baseline: the sold-out baselines are not openings; leave it out")
	}
	return errs
}

// startsAt is the starts_at of a product created at now: In later for an opening, to the
// millisecond; nil otherwise.
func (c *Config) startsAt(now time.Time) *time.Time {
	if c.model() != ModelOpening {
		return nil
	}
	return new(now.Add(c.Opening.In).UTC().Truncate(time.Millisecond))
}

// openingEpochDelay is how long after planning an opening its attack's epoch comes: room for
// the attack's setup, so that the schedule starts on time.
const openingEpochDelay = 50 * time.Millisecond

// openingOf plans the opening of product p on targets when the configuration runs one: its
// plan, its targeter, and log told to keep its answers. Otherwise it returns nil and tr.
func (s *session) openingOf(p api.Product, targets []string, log *purchaseLog, tr vegeta.Targeter) (*openingPlan, vegeta.Targeter, error) {
	cfg := s.cfg
	if cfg.model() != ModelOpening {
		return nil, tr, nil
	}
	if p.StartsAt == nil {
		return nil, nil, fmt.Errorf("product %d has no starts_at: does %s know sale windows?", p.ID, targets[0])
	}
	plan, err := newOpeningPlan(cfg.Opening, time.Now().Add(openingEpochDelay), *p.StartsAt)
	if err != nil {
		return nil, nil, err
	}
	plan.first = cfg.FirstUser
	log.opening = newOpeningLog(plan)
	if cfg.Opening.LineRate > 0 {
		if p.Line == nil {
			return nil, nil, fmt.Errorf("product %d has no line: does %s know lines?", p.ID, targets[0])
		}
		plan.line = s.startLine(p, targets, plan)
		log.line = plan.line.f
		return &plan, plan.line.f.Target, nil
	}
	return &plan, openingTargeter(purchaseURLs(targets, p.ID), cfg.Opening, cfg.FirstUser, cfg.Seed, cfg.Deploy.Tokens), nil
}

// judgeOpening reports the opening plan of run r, of stock units, from log and from
// PostgreSQL's orders, and adds what it broke to r's verdict. Nothing without a plan.
func (s *session) judgeOpening(ctx context.Context, r *RunReport, plan *openingPlan, log *purchaseLog, stock int64) {
	if plan == nil {
		return
	}
	log.mu.Lock()
	r.Opening = log.opening.report(stock)
	log.mu.Unlock()
	orders, err := s.aud.openingOrders(ctx, r.ProductID)
	if err != nil {
		r.Verdict.Problems = append(r.Verdict.Problems, err.Error())
		r.Verdict.OK, r.Verdict.Label = false, "FAIL"
	}
	r.Opening.Orders = orders
	if plan.line != nil {
		log.mu.Lock()
		adm := log.opening.admissions()
		log.mu.Unlock()
		r.Opening.Fairness.Line = s.lineFairness(ctx, r.ProductID, plan, adm)
		r.Opening.Fairness.PreQueue = "measured: see line"
	}
	judgeOpening(&r.Verdict, r.Strategy, stock, r.Opening)
}
