//go:build linux

package chaos_test

import (
	"net/http"
	"slices"
	"testing"
	"time"
)

// attempt is one purchase as the failover measurements see it.
type attempt struct {
	sent, done time.Time
	written    bool // 201: an order written
	refused    bool // a 503 (any code) or no answer
	outcome    string
}

// saleAttempts is a sale's purchases so far, by name (its cell).
type saleAttempts struct {
	name string
	get  func() []attempt
}

// attempts are the purchases of each sale: the buys of a reservation sale, every purchase of
// a plain one (retries after the sale are not recorded there).
func (fs *failoverSales) attempts() []saleAttempts {
	var out []saleAttempts
	for _, s := range fs.plain {
		out = append(out, saleAttempts{s.strategy, func() []attempt {
			var as []attempt
			for _, a := range s.answersSnapshot() {
				as = append(as, attempt{sent: a.sent, done: a.done, outcome: a.outcome(), written: a.status == http.StatusCreated,
					refused: a.status == 0 || a.status == http.StatusServiceUnavailable})
			}
			return as
		}})
	}
	for _, s := range fs.resv {
		out = append(out, saleAttempts{s.strategy + "+window", func() []attempt {
			var as []attempt
			for _, op := range s.opsSnapshot() {
				if op.kind == "buy" {
					as = append(as, attempt{sent: op.sent, done: op.done, outcome: op.outcome(), written: op.status == http.StatusCreated,
						refused: op.status == 0 || op.status == http.StatusServiceUnavailable})
				}
			}
			return as
		}})
	}
	return out
}

// outage is what a fault cost one sale: the longest stretch without an order written (a
// 201) that ended after the fault's onset, from the last 201 before it to the first after;
// how long from the onset to that first 201, and how long purchases were refused in the
// stretch (503 or no answer), from the first refusal to that 201. The queue strategy
// refuses nothing (it answers 202 while its writes wait); a purchase whose COMMIT went to a
// silent primary is answered late, not refused.
type outage struct {
	name      string
	unwritten time.Duration // the stretch
	firstSale time.Duration // from the onset to the 201 that ended it
	refused   time.Duration // 0: no purchase was refused
	counts    map[string]int
}

// measureOutage measures the outage of the sale whose purchases are as, for a fault that
// began at onset and was over, the sale selling again, by until.
func measureOutage(name string, as []attempt, onset, until time.Time) outage {
	slices.SortFunc(as, func(a, b attempt) int { return a.done.Compare(b.done) })
	o := outage{name: name, counts: map[string]int{}}
	var from, end time.Time // the longest stretch
	var last time.Time      // the last 201 so far
	for _, a := range as {
		if a.written && !a.done.After(until) {
			if !a.done.Before(onset) && a.done.Sub(last) > end.Sub(from) {
				from, end = last, a.done
			}
			last = a.done
		}
	}
	if end.IsZero() {
		return o
	}
	o.unwritten, o.firstSale = end.Sub(from), end.Sub(onset)
	start := from
	if start.Before(onset) {
		start = onset
	}
	for _, a := range as {
		if a.done.Before(onset) || a.done.After(end) {
			continue
		}
		o.counts[a.outcome]++
		if a.refused && !a.done.Before(start) && o.refused == 0 {
			o.refused = end.Sub(a.done)
		}
	}
	return o
}

// outages waits until every sale has sold again (sellsAgain) and measures each one's outage
// since onset.
func (fs *failoverSales) outages(t *testing.T, onset time.Time) []outage {
	t.Helper()
	fs.sellsAgain(t, time.Now(), 3)
	until := time.Now()
	var out []outage
	for _, m := range fs.attempts() {
		out = append(out, measureOutage(m.name, m.get(), onset, until))
	}
	return out
}

// logOutages logs each sale's outage under fault.
func logOutages(t *testing.T, fault string, outs []outage) {
	t.Helper()
	for _, o := range outs {
		t.Logf("%s, %s: %v without an order written, the first %v after the onset; purchases refused for %v; answers from the onset: %s",
			fault, o.name, o.unwritten.Round(10*time.Millisecond), o.firstSale.Round(10*time.Millisecond),
			o.refused.Round(10*time.Millisecond), formatCounts(o.counts))
	}
}
