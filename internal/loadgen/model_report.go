package loadgen

import (
	"fmt"
	"io"
	"strings"
)

// printModel writes the load model of a run and how its arrivals kept to their schedule;
// maxWorkers is the open run's cap on requests in flight.
func printModel(w io.Writer, st RunStats, maxWorkers int) {
	a := st.Arrivals
	switch st.Model {
	case ModelOpen:
		fmt.Fprintf(w, "model         open: %d arrivals due, %d sent, %d delayed (> %v late), %d dropped; latest %s late, at most %d in flight\n",
			a.Scheduled, a.Sent, a.Delayed, delaySlack, a.Dropped, fmtMS(a.MaxLagMS), a.MaxInFlight)
		if a.Delayed+a.Dropped > 0 {
			fmt.Fprintf(w, "  WARNING: %d arrivals held back: %s\n"+
				"  the corrected latency counts their wait, the dropped ones' until the attack stopped sending\n", a.Delayed+a.Dropped, heldBackBy(a, maxWorkers))
		}
	case ModelClosed:
		if a.Scheduled == 0 {
			fmt.Fprintf(w, "model         closed: %d requests from a fixed pool, at most %d in flight, each sent when a worker was free\n", a.Sent, a.MaxInFlight)
			break
		}
		fmt.Fprintf(w, "model         closed, paced: %d requests due, %d sent from a fixed pool (at most %d in flight), %d of them more than %v late, %d never sent\n",
			a.Scheduled, a.Sent, a.MaxInFlight, a.Delayed, delaySlack, a.Dropped)
	}
}

// heldBackBy says what held an open run's arrivals back: the API, when -max-workers requests
// were in flight, else the load generator itself.
func heldBackBy(a ArrivalStats, maxWorkers int) string {
	// A worker whose answer is being counted is no longer in flight: the cap shows as one less.
	if maxWorkers > 0 && a.MaxInFlight+1 >= int64(maxWorkers) {
		return fmt.Sprintf("-max-workers (%d) requests were in flight (the API answered slower than they arrived); raise -max-workers to send them", maxWorkers)
	}
	return fmt.Sprintf("the load generator fell behind its schedule with at most %d of -max-workers %d in flight (its CPU or timers); the load is more than this machine sends", a.MaxInFlight, maxWorkers)
}

// printHeldBack writes, below a table, the open runs whose arrivals were held back.
func printHeldBack(w io.Writer, rounds [][]RunReport, maxWorkers int) {
	for _, round := range rounds {
		for _, r := range round {
			if a := r.Stats.Arrivals; r.Stats.Model == ModelOpen && a.Delayed+a.Dropped > 0 {
				fmt.Fprintf(w, "WARNING: %s: %d of %d arrivals held back (%d delayed, %d dropped): %s\n",
					r.Name, a.Delayed+a.Dropped, a.Scheduled, a.Delayed, a.Dropped, heldBackBy(a, maxWorkers))
			}
		}
	}
}

// printErrors writes, below a table, what the errors of each run that had some were: their
// outcomes, and the first transport errors (requests that got no HTTP answer, such as a
// client timeout). An "errors" column alone does not say whether the service refused, failed
// or never answered.
func printErrors(w io.Writer, rounds [][]RunReport) {
	for i, round := range rounds {
		for _, r := range round {
			c := r.Stats.Outcomes
			if c.Errors() == 0 {
				continue
			}
			var kinds []string
			for o := range NumOutcomes {
				if o.isError() && c[o] > 0 {
					kinds = append(kinds, fmt.Sprintf("%s %d", o, c[o]))
				}
			}
			run := ""
			if len(rounds) > 1 {
				run = fmt.Sprintf(" (run %d)", i+1)
			}
			fmt.Fprintf(w, "errors: %s%s: %s", r.Name, run, strings.Join(kinds, ", "))
			if n := r.Stats.TimedOut; n > 0 {
				fmt.Fprintf(w, "; %d cut by -timeout (counted at it, a lower bound of their wait)", n)
			}
			if len(r.Stats.TransportErrors) > 0 {
				fmt.Fprintf(w, "; no answer, such as: %s", strings.Join(r.Stats.TransportErrors, "; "))
			}
			fmt.Fprintln(w)
		}
	}
}

// correctionNote says, below a table, how its corrected p99 was measured.
func correctionNote(sc Scenario) string {
	switch {
	case sc.Model == ModelOpen:
		return "open: from the scheduled arrival, so raw and corrected differ only by the wait of arrivals held back, those never sent until the attack stopped sending"
	case sc.Rate > 0:
		return "closed, paced as wrk2: from the request's place in the schedule"
	}
	return "closed, unpaced: HdrHistogram's after-the-fact estimate; give -rate for a schedule"
}
