package loadgen

import (
	"fmt"
	"io"
	"strings"
)

// printModel writes the load model of a run and how its arrivals kept to their schedule.
func printModel(w io.Writer, st RunStats) {
	a := st.Arrivals
	switch st.Model {
	case ModelOpen:
		fmt.Fprintf(w, "model         open: %d arrivals due, %d sent, %d delayed (> %v late), %d dropped; latest %s late, at most %d in flight\n",
			a.Scheduled, a.Sent, a.Delayed, delaySlack, a.Dropped, fmtMS(a.MaxLagMS), a.MaxInFlight)
		if a.Delayed+a.Dropped > 0 {
			fmt.Fprintf(w, "  WARNING: the load generator held back %d arrivals (-max-workers in flight, or its own CPU): the corrected\n"+
				"  latency counts their wait; raise -max-workers, or the load is more than this machine sends\n", a.Delayed+a.Dropped)
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

// printHeldBack writes, below a table, the open runs whose generator held arrivals back.
func printHeldBack(w io.Writer, rounds [][]RunReport) {
	for _, round := range rounds {
		for _, r := range round {
			if a := r.Stats.Arrivals; r.Stats.Model == ModelOpen && a.Delayed+a.Dropped > 0 {
				fmt.Fprintf(w, "WARNING: %s: the load generator held back %d of %d arrivals (%d delayed, %d dropped: -max-workers in flight, or the generator's CPU)\n",
					r.Name, a.Delayed+a.Dropped, a.Scheduled, a.Delayed, a.Dropped)
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
		return "open: from the scheduled arrival, so raw and corrected differ only by the generator's own lag"
	case sc.Rate > 0:
		return "closed, paced as wrk2: from the request's place in the schedule"
	}
	return "closed, unpaced: HdrHistogram's after-the-fact estimate; give -rate for a schedule"
}
