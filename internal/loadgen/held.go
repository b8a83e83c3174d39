package loadgen

import (
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// delaySlack is how late after it was due a scheduled request may leave and still count as
// on time: Go's timers and a busy load machine are that precise.
const delaySlack = 10 * time.Millisecond

// arrived notes the request of arrival seq of sched, sent at at (since the attack's epoch,
// which is the schedule's) and answered lat later, and returns its corrected latency: from
// when it was due.
func (res *attackResult) arrived(sched schedule, seq uint64, at, lat time.Duration) time.Duration {
	due, ok := sched.at(seq)
	if !ok {
		return lat
	}
	lag := at - due
	res.arrivals.MaxLagMS = max(res.arrivals.MaxLagMS, ms(lag))
	if lag > delaySlack {
		res.arrivals.Delayed++
	}
	return max(lat, lag+lat)
}

// settleArrivals counts the arrivals sched made due before the attack ended at end (since the
// epoch) and those never sent, once every answer is in; lastSent is the latest send. Each
// arrival never sent was still waiting when the attack stopped sending, at end or after its
// last send: the corrected latencies count it at its wait until then, a lower bound, so that a
// run cannot pass -max-p99 by leaving its arrivals unsent.
func (res *attackResult) settleArrivals(sched schedule, end, lastSent time.Duration, requests uint64) {
	// Arrival k is due when the rate's integral reaches k (arrival 0 at once), and one due at
	// the very end is sent.
	due := uint64(max(0, sched.count(end)))
	if at, ok := sched.at(due); ok && at <= end {
		due++
	}
	due = min(due, nonZero(requests))
	// Every request sent was due: a stop (-stop-after-sold, an abandonment sale paid out)
	// between the schedule's ticks may round one sent at the stop off the count.
	a := &res.arrivals
	a.Scheduled = max(int64(due), a.Sent)
	a.Dropped = max(0, int64(due)-a.Sent)
	// vegeta sends the arrivals in order: those never sent are the last ones due.
	stopped := max(end, lastSent)
	for k := uint64(a.Sent); k < due; k++ {
		if at, ok := sched.at(k); ok {
			res.tally.unsent(stopped - at)
		}
	}
}

// cutByTimeout reports whether r, of outcome o, is a request the attack's timeout cut: it got
// no HTTP answer, and its latency is the timeout, a lower bound of the wait it would have had.
func cutByTimeout(r *vegeta.Result, o Outcome, timeout time.Duration) bool {
	return o == TransportError && (r.Latency >= timeout || strings.Contains(r.Error, "Client.Timeout"))
}

// nonZero is n, or the largest uint64 for 0 (no limit).
func nonZero(n uint64) uint64 {
	if n == 0 {
		return ^uint64(0)
	}
	return n
}
