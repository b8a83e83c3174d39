//go:build linux

package gameday_test

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// report is a whole game day: every fault as it happened, and every alert the webhook got.
type report struct {
	Full       bool
	Setup      time.Duration // to start the deployment
	Start, End time.Time     // of the schedule
	Faults     []*faultRun
	Spans      []alertSpan
	Healthy    []string // alerts that fired before the first fault
}

// firedAlert is an alert that arrived during a fault's window.
type firedAlert struct {
	Name     string
	After    time.Duration // from the fault's start to its arrival
	Expected bool
	Again    bool // it fired before this fault, and fires again
}

// alertVerdict is what the alerts of one fault were held to.
type alertVerdict struct {
	Fired      []firedAlert
	Carried    []string // expected, and already firing when the fault began
	Missing    []string // expected, not arrived within its time
	Unexpected []string // arrived, neither expected nor allowed
	Misrouted  []string // at the receiver of another severity
}

func (a alertVerdict) ok() bool {
	return len(a.Missing) == 0 && len(a.Unexpected) == 0 && len(a.Misrouted) == 0
}

// judgeAlerts holds each fault's alerts to its expectations: the alerts whose first firing
// notice arrived from the fault's start to the next fault's are its own.
func judgeAlerts(r *report) {
	for i, fr := range r.Faults {
		until := r.End.Add(time.Hour)
		if i+1 < len(r.Faults) {
			until = r.Faults[i+1].Inject
		}
		a := &fr.Alerts
		for _, s := range r.Spans {
			if s.Start.Before(fr.Inject) || !s.Start.Before(until) {
				continue
			}
			expected := slices.ContainsFunc(fr.Expect, func(e expectation) bool { return e.Alert == s.Name })
			// An alert that fired before, in an earlier fault's window, and fires again here
			// (a product the earlier fault left inconsistent, audited again once PostgreSQL is
			// back) is that fault's, told again: not new here.
			again := slices.ContainsFunc(r.Spans, func(o alertSpan) bool {
				return o.Name == s.Name && o.Key == s.Key && o.Start.Before(fr.Inject)
			})
			a.Fired = append(a.Fired, firedAlert{Name: s.Name, After: s.Start.Sub(fr.Inject), Expected: expected, Again: again})
			if !expected && !again && !slices.Contains(fr.Allow, s.Name) && !slices.Contains(a.Unexpected, s.Name) {
				a.Unexpected = append(a.Unexpected, s.Name)
			}
			if want := map[string]string{"critical": "/seckill/page", "warning": "/seckill/ticket"}[s.Severity]; s.Receiver != want {
				a.Misrouted = append(a.Misrouted, fmt.Sprintf("%s (%s) at %s", s.Name, s.Severity, s.Receiver))
			}
		}
		for _, e := range fr.Expect {
			in := slices.ContainsFunc(r.Spans, func(s alertSpan) bool {
				return s.Name == e.Alert && !s.Start.Before(fr.Inject) && !s.Start.After(fr.Inject.Add(e.Within))
			})
			carried := slices.ContainsFunc(r.Spans, func(s alertSpan) bool {
				return s.Name == e.Alert && s.Start.Before(fr.Inject) && (s.End.IsZero() || s.End.After(fr.Inject))
			})
			switch {
			case in:
			case carried:
				a.Carried = append(a.Carried, e.Alert)
			default:
				a.Missing = append(a.Missing, fmt.Sprintf("%s within %v", e.Alert, e.Within))
			}
		}
	}
	for _, s := range r.Spans {
		if len(r.Faults) == 0 || s.Start.Before(r.Faults[0].Inject) {
			r.Healthy = append(r.Healthy, s.Name)
		}
	}
}

// alertsLine says what arrived in a fault's window, each with its time after the fault.
func (a alertVerdict) line() string {
	var parts []string
	seen := map[string]bool{}
	for _, f := range a.Fired {
		if seen[f.Name] {
			continue
		}
		seen[f.Name] = true
		mark := ""
		switch {
		case f.Expected:
			mark = "*"
		case f.Again:
			mark = " (again)"
		}
		parts = append(parts, fmt.Sprintf("%s%s +%.1fs", f.Name, mark, f.After.Seconds()))
	}
	for _, c := range a.Carried {
		parts = append(parts, c+"* (already firing)")
	}
	s := strings.Join(parts, ", ")
	if s == "" {
		s = "none"
	}
	if len(a.Missing) > 0 {
		s += "; MISSING " + strings.Join(a.Missing, ", ")
	}
	if len(a.Unexpected) > 0 {
		s += "; UNEXPECTED " + strings.Join(a.Unexpected, ", ")
	}
	if len(a.Misrouted) > 0 {
		s += "; MISROUTED " + strings.Join(a.Misrouted, ", ")
	}
	return s
}

// refusedCount is the cell's buyers not served: refused by the API, by HAProxy, or with no
// connection.
func (v verdict) refused() int {
	n := 0
	for class, k := range v.Classes {
		if class != "201" && class != "202" && class != "409" && class != "lost" {
			n += k
		}
	}
	return n
}

// pass is the table's word for a cell.
func pass(ok bool) string {
	if ok {
		return "ok"
	}
	return "FAIL"
}

// table is the report for the terminal: a row per cell, a line of alerts per fault.
func (r *report) table() string {
	var b strings.Builder
	mode := "one cell of each fault (make test)"
	if r.Full {
		mode = "the whole schedule (SECKILL_GAMEDAY=full)"
	}
	fmt.Fprintf(&b, "\nGame day, %s: %s, %d faults, schedule %v (deployment up in %v)\n", mode,
		r.Start.UTC().Format("2006-01-02 15:04 UTC"), len(r.Faults), r.End.Sub(r.Start).Round(time.Second), r.Setup.Round(time.Second))
	w := tabwriter.NewWriter(&b, 2, 8, 2, ' ', 0)
	fmt.Fprintln(w, "fault\tstrategy\tbuyers\t201\t202\t409\tnot served\tlost\tuntrue\tq-lost\tunavail s\trecover s\thistory\tverdict")
	for _, fr := range r.Faults {
		for _, v := range fr.Verdicts {
			fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f\t%.1f\t%s\t%s\n", v.Fault, v.Strategy, v.Attempts,
				v.Classes["201"], v.Classes["202"], v.Classes["409"], v.refused(), v.Lost, len(v.Untrue), v.QueuedLost,
				v.UnavailableS, v.RecoverS, v.History, pass(v.ok(fr.QueueLoss)))
		}
	}
	w.Flush()
	b.WriteString("\nAlerts at the webhook, per fault (* expected; (again): fired in an earlier fault's window too; +seconds after the fault began):\n")
	for _, fr := range r.Faults {
		fmt.Fprintf(&b, "  %-24s %s  [%s]\n", fr.Name, fr.Alerts.line(), pass(fr.Alerts.ok()))
	}
	if len(r.Healthy) > 0 {
		fmt.Fprintf(&b, "  before any fault: UNEXPECTED %v\n", r.Healthy)
	}
	return b.String()
}
