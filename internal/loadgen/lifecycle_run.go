package loadgen

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/seckill/seckill/internal/api/client"
)

// startLifecycle starts following an abandonment sale of product id on it's targets, when
// the run is one (-pay-within): it returns the context of the attack, which the stopping
// rule cancels once every unit is paid, the lifecycle, and what ends it once the attack is
// over (settling the reservations, see lifecycle.settle) and reports it. Otherwise it returns
// ctx, nil, and a func that returns nil.
func (s *session) startLifecycle(ctx context.Context, c *client.Client, it Item, id, stock int64) (context.Context, *lifecycle, func(*attackResult) *LifecycleReport) {
	if !s.cfg.Abandon.On() {
		return ctx, nil, func(*attackResult) *LifecycleReport { return nil }
	}
	actx, stopAttack := context.WithCancel(ctx)
	lc := newLifecycle(ctx, s.cfg, c, it.Targets, id, stock, stopAttack)
	stopFollow := lc.follow(ctx)
	fmt.Fprintf(s.stderr, "[%s] %s\n", it.Name, s.cfg.Abandon.describe())
	return actx, lc, func(res *attackResult) *LifecycleReport {
		defer stopAttack()
		var sent int64
		if res != nil {
			sent = res.arrivals.Sent
		}
		reason := lc.stopReason(ctx, sent, s.cfg.Requests)
		fmt.Fprintf(s.stderr, "[%s] attack stopped (%s) after %d requests; settling: payments under way, then reservations pending until their window ends\n",
			it.Name, reason, sent)
		lc.settle(ctx)
		stopFollow()
		a := s.cfg.Abandon
		return &LifecycleReport{PayWithinMS: a.PayWithin.Milliseconds(), PayRatio: a.PayRatio, CancelRatio: a.CancelRatio,
			PayDelayMS: a.PayDelay.Milliseconds(), StopReason: reason, Payers: lc.pay.counts(), Timeline: lc.timeline()}
	}
}

// judgeLifecycle audits r's abandonment sale once settled, from PostgreSQL when the run reads
// it, else from the API's audit in r, and adds what checkLifecycle finds to r's verdict.
func (s *session) judgeLifecycle(ctx context.Context, r *RunReport, lc *lifecycle) {
	l := r.Lifecycle
	if l == nil || r.Audit == nil {
		return
	}
	switch {
	case s.aud.pg != nil:
		a, err := directLifecycle(ctx, s.aud.pg, r.ProductID)
		if err != nil {
			l.Problems = append(l.Problems, err.Error())
			break
		}
		l.Audit = a
		if x := r.Audit.API; x != nil && (int64(x.Ended) != a.Ended || int64(x.Pending) != a.Pending) {
			l.Problems = append(l.Problems, fmt.Sprintf("API audit (pending %d, ended %d) and PostgreSQL (pending %d, ended %d) disagree",
				x.Pending, x.Ended, a.Pending, a.Ended))
		}
	case r.Audit.API != nil:
		l.Audit = apiLifecycle(r.Audit.API)
	default:
		l.Problems = append(l.Problems, "no audit of the reservations: neither PostgreSQL nor the API's audit answered")
	}
	if l.Audit.Source != "" {
		l.Audit.Resold = max(0, l.Payers.Reserved-l.Audit.InitialStock)
		l.Problems = append(l.Problems, checkLifecycle(l.Audit, l.Payers, l.StopReason == StopPaidOut)...)
	}
	for _, p := range l.Problems {
		r.Verdict.Problems = append(r.Verdict.Problems, "reservations: "+p)
	}
	if len(l.Problems) > 0 {
		r.Verdict.OK, r.Verdict.Label = false, "FAIL"
	}
}

// printLifecycles writes the abandonment sales of rep's runs: per second, then settled.
func printLifecycles(w io.Writer, rep Report) {
	for _, round := range rep.Rounds {
		for _, r := range round {
			if r.Lifecycle != nil {
				printLifecycle(w, r.Name, r.Lifecycle)
			}
			if r.Opening != nil && rep.Command != "run" { // run prints it in its report
				fmt.Fprintf(w, "\nopening [%s]\n", r.Name)
				r.Opening.print(w)
			}
		}
	}
}

func printLifecycle(w io.Writer, name string, l *LifecycleReport) {
	fmt.Fprintf(w, "\nabandonment sale [%s]: pay within %d ms; %.0f%% pay, %.0f%% cancel after uniform 0..%d ms; stopped: %s\n",
		name, l.PayWithinMS, 100*l.PayRatio, 100*l.CancelRatio, l.PayDelayMS, l.StopReason)
	fmt.Fprintln(w, "  s   reserved  resold  paid  cancelled  expired  pending  stock   (cumulative; reserved, resold, cancelled: loadtest's answers; paid, expired, pending, stock: the API's audit)")
	// A second that repeats the one before it is folded into one line: a sale that stalls
	// says so in a line, not a page.
	for i := 0; i < len(l.Timeline); {
		t := l.Timeline[i]
		j := i + 1
		for j < len(l.Timeline) && sameSecond(l.Timeline[j], t) {
			j++
		}
		mark := ""
		if !t.Audited {
			mark = "  (audit unanswered: its figures repeat)"
		}
		fmt.Fprintf(w, "  %-3d %8d %7d %5d %10d %8d %8d %6d%s\n", t.S, t.Reserved, t.Resold, t.Paid, t.Cancelled, t.Expired, t.Pending, t.Stock, mark)
		if j-i > 1 {
			fmt.Fprintf(w, "  %d-%d: the same\n", l.Timeline[i+1].S, l.Timeline[j-1].S)
		}
		i = j
	}
	p := l.Payers
	fmt.Fprintf(w, "  winners  %d reserved: %d chose to pay, %d to cancel, %d walked away; %d users answered paid, %d cancels answered 200, %d unclear\n",
		p.Reserved, p.Choices[choicePay], p.Choices[choiceCancel], p.Choices[choiceWalk], p.PaidUsers, p.Cancelled, p.Unclear)
	fmt.Fprintf(w, "  answers  %s\n", answersLine(p.Answers))
	a := l.Audit
	if a.Source != "" {
		split := ""
		if a.Expired != nil && a.Cancelled != nil {
			split = fmt.Sprintf(" (expired %d, cancelled %d)", *a.Expired, *a.Cancelled)
		}
		ok := "holds"
		if a.Stock+a.Pending+a.Paid != a.InitialStock {
			ok = "BROKEN"
		}
		fmt.Fprintf(w, "  audit    (%s) stock %d + pending %d + paid %d = %d, initial stock %d: %s; ended %d%s, resold %d, users paid twice %d\n",
			a.Source, a.Stock, a.Pending, a.Paid, a.Stock+a.Pending+a.Paid, a.InitialStock, ok, a.Ended, split, a.Resold, a.UsersPaidTwice)
	}
	for _, pr := range l.Problems {
		fmt.Fprintf(w, "  PROBLEM  %s\n", pr)
	}
}

// sameSecond reports whether a and b differ only in their second.
func sameSecond(a, b LifecycleSecond) bool {
	a.S = b.S
	return a == b
}

// answersLine lists answers sorted by name: "cancel cancelled 3, pay order_expired 2, pay paid 40".
func answersLine(answers map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(answers)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, answers[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
