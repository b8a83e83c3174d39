package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// ReadReport reads a JSON report that -json wrote.
func ReadReport(path string) (Report, error) {
	var r Report
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &r)
	}
	if err != nil {
		return Report{}, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Merge combines simultaneous reports from several machines (docs/loadtest.md#merging-runs), or
// returns an error for ones that cannot be merged.
func Merge(reps []Report, names []string) (Report, error) {
	if len(reps) == 0 {
		return Report{}, errors.New("nothing to merge")
	}
	out := Report{Command: "merge", Started: reps[0].Started, Build: readBuild(), Machine: reps[0].Machine, Scenario: reps[0].Scenario,
		Meta: map[string]string{"merged_from": strings.Join(names, ", ")}}
	groups := map[[2]string][]RunReport{}
	var order [][2]string
	for _, rep := range reps {
		out.Started = minTime(out.Started, rep.Started)
		for i, round := range rep.Rounds {
			for _, r := range round {
				k := [2]string{fmt.Sprint(i), r.Name}
				if groups[k] == nil {
					order = append(order, k)
				}
				groups[k] = append(groups[k], r)
			}
		}
	}
	for _, k := range order {
		var i int
		fmt.Sscan(k[0], &i)
		for len(out.Rounds) <= i {
			out.Rounds = append(out.Rounds, nil)
		}
		r, err := mergeRuns(groups[k])
		if err != nil {
			return Report{}, fmt.Errorf("%s: %w", k[1], err)
		}
		out.Rounds[i] = append(out.Rounds[i], r)
	}
	out.Summary = summarizeRounds(out.Rounds)
	out.OK = len(out.Summary) > 0
	for _, row := range out.Summary {
		out.OK = out.OK && row.OK
	}
	return out, nil
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// mergeRuns merges the runs of one name (see Merge).
func mergeRuns(rs []RunReport) (RunReport, error) {
	m := RunReport{Name: rs[0].Name, Strategy: rs[0].Strategy, Backend: rs[0].Backend, ProductID: rs[0].ProductID}
	m.Verdict = verdict{OK: true}
	var labels []string
	for i, r := range rs {
		m.Buyers.Distinct += r.Buyers.Distinct
		m.Buyers.Repeats += r.Buyers.Repeats
		if r.ProductID != m.ProductID {
			m.ProductID = 0
		}
		m.Verdict.OK = m.Verdict.OK && r.Verdict.OK
		if !slices.Contains(labels, r.Verdict.Label) {
			labels = append(labels, r.Verdict.Label)
		}
		for _, p := range r.Verdict.Problems {
			m.Verdict.Problems = append(m.Verdict.Problems, fmt.Sprintf("report %d: %s", i+1, p))
		}
	}
	m.Verdict.Label = fmt.Sprintf("merged %d: %s", len(rs), strings.Join(labels, ", "))
	st, err := mergeStats(rs)
	m.Stats = st
	return m, err
}

// mergeStats merges the figures of rs (see Merge).
func mergeStats(rs []RunReport) (RunStats, error) {
	st := RunStats{Model: rs[0].Stats.Model, StatusCodes: map[string]int{}, ByOutcome: map[string]Latencies{}}
	hists := map[string]*hdrhistogram.Histogram{}
	add := func(key, enc string) error {
		if enc == "" {
			return nil
		}
		h, err := decodeHist(enc)
		if err != nil {
			return err
		}
		if hists[key] == nil {
			hists[key] = newHist()
		}
		hists[key].Merge(h)
		return nil
	}
	var end, sellEnd time.Time
	var weighted float64
	for _, r := range rs {
		s := r.Stats
		if s.Model != st.Model {
			st.Model = "mixed"
		}
		if s.Histograms.Raw == "" && s.Requests > 0 {
			return RunStats{}, errors.New("a report has no histograms: written by a loadtest before HDR histograms")
		}
		errs := []error{add("raw", s.Histograms.Raw), add("corrected", s.Histograms.Corrected)}
		for o, enc := range s.Histograms.ByOutcome {
			errs = append(errs, add("outcome "+o, enc))
		}
		if err := errors.Join(errs...); err != nil {
			return RunStats{}, err
		}
		st.Requests += s.Requests
		for o := range st.Outcomes {
			st.Outcomes[o] += s.Outcomes[o]
		}
		for c, n := range s.StatusCodes {
			st.StatusCodes[c] += n
		}
		for _, e := range s.TransportErrors {
			if len(st.TransportErrors) < maxTransportErrs && !slices.Contains(st.TransportErrors, e) {
				st.TransportErrors = append(st.TransportErrors, e)
			}
		}
		for c, n := range s.CPUTicks {
			if st.CPUTicks == nil {
				st.CPUTicks = map[string]int64{}
			}
			st.CPUTicks[c] += n
		}
		st.Readmitted += s.Readmitted
		st.TimedOut += s.TimedOut
		st.Requeued += s.Requeued
		st.ExcludedNoTarget += s.ExcludedNoTarget
		st.Rejections += s.Rejections
		st.Inversions += s.Inversions
		weighted += s.InversionShare * float64(s.Requests)
		a, b := &st.Arrivals, s.Arrivals
		a.Scheduled, a.Sent, a.Delayed, a.Dropped = a.Scheduled+b.Scheduled, a.Sent+b.Sent, a.Delayed+b.Delayed, a.Dropped+b.Dropped
		a.MaxLagMS, a.MaxInFlight = max(a.MaxLagMS, b.MaxLagMS), a.MaxInFlight+b.MaxInFlight
		if s.Requests == 0 {
			continue
		}
		st.Started = minTime(st.Started, s.Started)
		end = maxTime(end, s.Started.Add(secondsDuration(s.Seconds)))
		if s.Buyers() > 0 {
			sellEnd = maxTime(sellEnd, s.Started.Add(secondsDuration(s.SellSeconds)))
		}
	}
	st.Correction = rs[0].Stats.Correction
	st.Latency = latenciesOf(hists["raw"])
	st.LatencyCorrected = atLeast(latenciesOf(hists["corrected"]), st.Latency)
	st.Histograms = Histograms{Unit: "us", Raw: encodeHist(hists["raw"]), Corrected: encodeHist(hists["corrected"]), ByOutcome: map[string]string{}}
	for k, h := range hists {
		if o, ok := strings.CutPrefix(k, "outcome "); ok {
			st.ByOutcome[o], st.Histograms.ByOutcome[o] = latenciesOf(h), encodeHist(h)
		}
	}
	if st.Requests > 0 {
		st.InversionShare = weighted / float64(st.Requests)
	}
	if st.Seconds = end.Sub(st.Started).Seconds(); st.Seconds > 0 {
		st.Throughput = float64(st.Requests) / st.Seconds
	}
	if n := st.Buyers(); n > 0 && !sellEnd.IsZero() {
		if st.SellSeconds = sellEnd.Sub(st.Started).Seconds(); st.SellSeconds > 0 {
			st.OrdersPerSec = float64(n) / st.SellSeconds
		}
	} else {
		sellEnd = st.Started
	}
	st.RejectSeconds = end.Sub(sellEnd).Seconds()
	if st.Rejections >= 20 && st.RejectSeconds >= 0.2 {
		st.RejectionsPerSec = float64(st.Rejections) / st.RejectSeconds
	}
	return st, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func secondsDuration(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// PrintMerged writes a merge's text report.
func PrintMerged(w io.Writer, rep Report) {
	fmt.Fprintf(w, "merge of %s: counts summed, latencies from the merged histograms, rates over the joined windows; no audit\n",
		rep.Meta["merged_from"])
	if len(rep.Rounds) == 1 && len(rep.Rounds[0]) == 1 {
		printRun(w, rep.Scenario, rep.Rounds[0][0])
		return
	}
	PrintTable(w, rep)
}

// WriteMerged writes rep's JSON and its first run's .hgrm; an empty path writes nothing.
func WriteMerged(rep Report, jsonPath, histPath string) error {
	if jsonPath != "" {
		if err := writeJSON(jsonPath, rep); err != nil {
			return err
		}
	}
	if histPath == "" || len(rep.Rounds) == 0 || len(rep.Rounds[0]) == 0 {
		return nil
	}
	h, err := decodeHist(rep.Rounds[0][0].Stats.Histograms.Corrected)
	if err != nil {
		return err
	}
	f, err := os.Create(histPath)
	if err != nil {
		return fmt.Errorf("-hist: %w", err)
	}
	return errors.Join(writeHgrm(f, h), f.Close())
}
