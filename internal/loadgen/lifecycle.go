package loadgen

import (
	"context"
	"sync"
	"time"

	"github.com/seckill/seckill/internal/api/client"
)

// Why an abandonment sale's attack stopped (LifecycleReport.StopReason).
const (
	StopPaidOut         = "paid_out"         // the API's audit said every unit is paid
	StopBuyersExhausted = "buyers_exhausted" // -requests were all sent: no buyer is left
	StopMaxDuration     = "max_duration"     // -duration (or the stages) ran out
	StopInterrupted     = "interrupted"      // the run was stopped
)

// lifecycleInterval is how often an abandonment sale reads the API's audit: one row of the
// timeline, and the stopping rule's check.
const lifecycleInterval = time.Second

// settleSlack is how long after the payment window the settling waits for the last
// reservations to expire: the sweeper runs every SWEEP_INTERVAL (1 s by default).
const settleSlack = 5 * time.Second

// LifecycleSecond is one cumulative second of an abandonment sale: the load tester's answers
// and the API's audit.
type LifecycleSecond struct {
	S         int   `json:"s"`
	Reserved  int64 `json:"reserved"`
	Resold    int64 `json:"resold"` // reservations beyond the initial stock: units that came back and sold again
	PaidUsers int64 `json:"paid_users"`
	Cancelled int64 `json:"cancelled"`
	Audited   bool  `json:"audited"` // false: the audit could not be read; its figures are the previous row's
	Stock     int64 `json:"stock"`
	Pending   int64 `json:"pending"`
	Paid      int64 `json:"paid"`
	Ended     int64 `json:"ended"`
	Expired   int64 `json:"expired"`
}

// lifecycle follows one abandonment sale: the payers act on its reservations, and every
// lifecycleInterval it reads the API's audit into the timeline and stops the attack once
// every unit is paid. It is safe for concurrent use.
type lifecycle struct {
	cfg       Abandon
	api       *client.Client // audits the product
	productID int64
	initial   int64
	pay       *payers
	began     time.Time
	stop      context.CancelFunc // stops the attack

	mu      sync.Mutex
	rows    []LifecycleSecond
	paidOut bool
}

// newLifecycle returns the lifecycle of product productID, of initial units, whose attack
// stop stops. Its payers use one client per target and its audits c.
func newLifecycle(ctx context.Context, cfg Config, c *client.Client, targets []string, productID, initial int64, stop context.CancelFunc) *lifecycle {
	clients := make([]*client.Client, len(targets))
	for i, t := range targets {
		clients[i] = cfg.Deploy.apiClient(t, "")
	}
	return &lifecycle{cfg: cfg.Abandon, api: c, productID: productID, initial: initial, stop: stop, began: time.Now(),
		pay: newPayers(context.WithoutCancel(ctx), cfg.Abandon, productID, clients, cfg.Seed)}
}

// reservedBy is the attack's hook: a purchase answered 201 for user, or 202 (queued).
func (l *lifecycle) reservedBy(user int64, queued bool) { l.pay.reservedBy(user, queued) }

// follow reads the audit every lifecycleInterval until the returned func is called (which
// reads once more), and stops the attack when paid equals the initial stock.
func (l *lifecycle) follow(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(lifecycleInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				l.look(ctx)
			}
		}
	}()
	return func() {
		cancel()
		<-done
		l.look(context.Background())
	}
}

// look reads the audit into a row of the timeline.
func (l *lifecycle) look(ctx context.Context) LifecycleSecond {
	ctx, cancel := context.WithTimeout(ctx, lifecycleInterval)
	defer cancel()
	pc := l.pay.counts()
	row := LifecycleSecond{S: int(time.Since(l.began).Round(time.Second) / time.Second), Reserved: pc.Reserved,
		Resold: max(0, pc.Reserved-l.initial), PaidUsers: pc.PaidUsers, Cancelled: pc.Cancelled}
	a, err := l.api.Audit(ctx, l.productID)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		row.Audited, row.Stock, row.Pending = true, int64(a.Stock), int64(a.Pending)
		row.Paid, row.Ended = int64(a.Orders-a.Pending), int64(a.Ended)
		row.Expired = max(0, row.Ended-pc.Cancelled)
	} else if n := len(l.rows); n > 0 {
		p := l.rows[n-1]
		row.Stock, row.Pending, row.Paid, row.Ended, row.Expired = p.Stock, p.Pending, p.Paid, p.Ended, p.Expired
	}
	if n := len(l.rows); n > 0 && l.rows[n-1].S == row.S {
		l.rows[n-1] = row
	} else {
		l.rows = append(l.rows, row)
	}
	if row.Audited && row.Paid >= l.initial && !l.paidOut {
		l.paidOut = true
		l.stop()
	}
	return row
}

// latest is the last row, nil before the first.
func (l *lifecycle) latest() *LifecycleSecond {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.rows) == 0 {
		return nil
	}
	r := l.rows[len(l.rows)-1]
	return &r
}

// stopReason says why the attack stopped, once it has: sent requests of at most requests.
func (l *lifecycle) stopReason(ctx context.Context, sent int64, requests uint64) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.paidOut:
		return StopPaidOut
	case ctx.Err() != nil:
		return StopInterrupted
	case uint64(sent) >= requests:
		return StopBuyersExhausted
	}
	return StopMaxDuration
}

// settle waits, after the attack, for the payments and cancels under way, then (bounded by
// the window and settleSlack) for the API's audit to show no reservation pending.
func (l *lifecycle) settle(ctx context.Context) {
	l.pay.wait()
	deadline := time.Now().Add(l.cfg.PayWithin + settleSlack)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if r := l.look(ctx); r.Audited && r.Pending == 0 {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// timeline is a copy of the rows so far.
func (l *lifecycle) timeline() []LifecycleSecond {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]LifecycleSecond(nil), l.rows...)
}

// live is the sale's figures now, for the live page: the last audit's row with the payers'
// answers so far; nil for a nil lifecycle (an ordinary sale) or before the first audit.
func (l *lifecycle) live() *LifecycleSecond {
	if l == nil {
		return nil
	}
	r := l.latest()
	if r == nil {
		r = &LifecycleSecond{Stock: l.initial}
	}
	pc := l.pay.counts()
	r.S = int(time.Since(l.began) / time.Second)
	r.Reserved, r.Resold, r.PaidUsers, r.Cancelled = pc.Reserved, max(0, pc.Reserved-l.initial), pc.PaidUsers, pc.Cancelled
	return r
}
