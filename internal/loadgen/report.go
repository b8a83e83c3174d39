package loadgen

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/seckill/seckill/internal/audit"
	"github.com/seckill/seckill/internal/labrun"
)

// perOrderMS is what one order costs a design that holds the lock for one order at a
// time, on the reference machine: a Redis round trip (~0.05 ms), a hot-row transaction
// (~0.5 ms) and their overhead: about 1,500 orders/s at think_ms 0.
const perOrderMS = 0.65

// orderBound is the most orders/s such a design can sell of one product with think_ms.
func orderBound(thinkMS int) float64 { return 1000 / (perOrderMS + float64(thinkMS)) }

// SummaryRow is one strategy over every round: medians, and the worst oversold, dupes and errors.
type SummaryRow struct {
	Name             string  `json:"name"`
	Strategy         string  `json:"strategy,omitempty"`
	Backend          string  `json:"backend,omitempty"` // as in runReport
	Runs             int     `json:"runs"`
	OrdersPerSec     float64 `json:"orders_per_sec"`
	RejectionsPerSec float64 `json:"rejections_per_sec"`
	AnswersPerSec    float64 `json:"answers_per_sec"` // answers of any outcome (runStats.Throughput)
	P50              float64 `json:"p50_ms"`
	P99              float64 `json:"p99_ms"`
	// P99Corrected is the p99 from each request's intended start (RunStats.LatencyCorrected).
	P99Corrected   float64 `json:"p99_corrected_ms"`
	P99Bought      float64 `json:"p99_bought_ms"`
	Bought         int64   `json:"bought"`
	Accepted       int64   `json:"accepted"` // 202: queued, written after the answer (queue strategy)
	SoldOut        int64   `json:"sold_out"`
	Already        int64   `json:"already_purchased"`
	Busy           int64   `json:"busy"` // busy and rate_limited
	InversionShare float64 `json:"inversion_share"`
	Oversold       int64   `json:"oversold"`
	Dupes          int64   `json:"dupes"`
	Errors         int64   `json:"errors"`
	// Dropped and TimedOut are the worst run's unsent and timed-out requests.
	Dropped  int64  `json:"dropped,omitempty"`
	TimedOut int64  `json:"timed_out,omitempty"`
	Verdict  string `json:"verdict"`
	OK       bool   `json:"ok"`
	// VsRedis is an etcd or ZooKeeper row's figures over Redis's.
	VsRedis *BackendRatio `json:"vs_redis,omitempty"`
	// CPUPerAnswer is each command's CPU time in microseconds per answer.
	CPUPerAnswer map[string]float64 `json:"cpu_us_per_answer,omitempty"`
}

func summarizeRounds(rounds [][]RunReport) []SummaryRow {
	var order []string
	byName := map[string][]RunReport{}
	for _, round := range rounds {
		for _, r := range round {
			if byName[r.Name] == nil {
				order = append(order, r.Name)
			}
			byName[r.Name] = append(byName[r.Name], r)
		}
	}
	rows := make([]SummaryRow, 0, len(order))
	for _, name := range order {
		rs := byName[name]
		med := func(f func(RunReport) float64) float64 {
			v := make([]float64, len(rs))
			for i, r := range rs {
				v[i] = f(r)
			}
			return median(v)
		}
		medN := func(f func(RunReport) int64) int64 {
			return int64(med(func(r RunReport) float64 { return float64(f(r)) }) + 0.5)
		}
		row := SummaryRow{
			Name: name, Strategy: rs[0].Strategy, Backend: rs[0].Backend, Runs: len(rs), OK: true, Verdict: rs[0].Verdict.Label,
			OrdersPerSec:     med(func(r RunReport) float64 { return r.Stats.OrdersPerSec }),
			RejectionsPerSec: med(func(r RunReport) float64 { return r.Stats.RejectionsPerSec }),
			AnswersPerSec:    med(func(r RunReport) float64 { return r.Stats.Throughput }),
			P50:              med(func(r RunReport) float64 { return r.Stats.Latency.P50 }),
			P99:              med(func(r RunReport) float64 { return r.Stats.Latency.P99 }),
			P99Corrected:     med(func(r RunReport) float64 { return r.Stats.LatencyCorrected.P99 }),
			P99Bought:        med(func(r RunReport) float64 { return r.Stats.ByOutcome[Bought.String()].P99 }),
			Bought:           medN(func(r RunReport) int64 { return r.Stats.Outcomes[Bought] }),
			Accepted:         medN(func(r RunReport) int64 { return r.Stats.Outcomes[Accepted] }),
			SoldOut:          medN(func(r RunReport) int64 { return r.Stats.Outcomes[SoldOut] }),
			Already:          medN(func(r RunReport) int64 { return r.Stats.Outcomes[AlreadyPurchased] }),
			Busy:             medN(func(r RunReport) int64 { return r.Stats.Outcomes[Busy] + r.Stats.Outcomes[RateLimited] }),
			InversionShare:   med(func(r RunReport) float64 { return r.Stats.InversionShare }),
		}
		ticks, answers := map[string]int64{}, int64(0)
		for _, r := range rs {
			if r.Stats.CPUTicks != nil {
				for c, t := range r.Stats.CPUTicks {
					ticks[c] += t
				}
				answers += r.Stats.Answered()
			}
		}
		row.CPUPerAnswer = cpuPerAnswer(ticks, answers)
		for _, r := range rs {
			row.Oversold = max(row.Oversold, r.Oversold())
			row.Dupes = max(row.Dupes, r.Dupes())
			row.Errors = max(row.Errors, r.Stats.Outcomes.Errors())
			row.Dropped = max(row.Dropped, r.Stats.Arrivals.Dropped)
			row.TimedOut = max(row.TimedOut, r.Stats.TimedOut)
			if !r.Verdict.OK {
				row.OK, row.Verdict = false, r.Verdict.Label
			}
		}
		rows = append(rows, row)
	}
	compareBackends(rows, rounds)
	return rows
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

// printRun writes the full text report of one run.
func printRun(w io.Writer, sc Scenario, r RunReport) {
	st := r.Stats
	c := st.Outcomes
	l := st.Latency
	fmt.Fprintf(w, "strategy      %s, product %d: %s\n", r.Strategy, r.ProductID, sc.describe())
	fmt.Fprintf(w, "requests      %d in %.2fs: %.0f req/s; users %d distinct, %d repeat requests\n",
		st.Requests, st.Seconds, st.Throughput, r.Buyers.Distinct, r.Buyers.Repeats)
	printModel(w, st, sc.MaxWorkers)
	fmt.Fprintf(w, "latency       mean %s  p50 %s  p90 %s  p99 %s  max %s  (raw: from each request's send)\n",
		fmtMS(l.Mean), fmtMS(l.P50), fmtMS(l.P90), fmtMS(l.P99), fmtMS(l.Max))
	if c := st.LatencyCorrected; st.Correction != "" {
		fmt.Fprintf(w, "corrected     mean %s  p50 %s  p90 %s  p99 %s  max %s  (%s)\n",
			fmtMS(c.Mean), fmtMS(c.P50), fmtMS(c.P90), fmtMS(c.P99), fmtMS(c.Max), st.Correction)
	}
	fmt.Fprint(w, "outcomes     ")
	for o := range NumOutcomes {
		fmt.Fprintf(w, " %s %d", o, c[o])
	}
	fmt.Fprintln(w)
	for o := range NumOutcomes {
		if bl, ok := st.ByOutcome[o.String()]; ok && (o == Bought || o == SoldOut || c[o] > 0) {
			fmt.Fprintf(w, "  %-18s p50 %s  p99 %s  max %s\n", o.String()+":", fmtMS(bl.P50), fmtMS(bl.P99), fmtMS(bl.Max))
		}
	}
	if st.TimedOut > 0 {
		fmt.Fprintf(w, "timeouts      %d requests cut by -timeout %s: errors (transport_error), their latency counted as the timeout, a lower bound\n",
			st.TimedOut, sc.Timeout)
	}
	bound := orderBound(sc.ThinkMS)
	fmt.Fprintf(w, "orders        %d in %.2fs: %.0f orders/s (%.0f%% of the %.0f orders/s one-order-at-a-time bound)\n",
		st.Buyers(), st.SellSeconds, st.OrdersPerSec, 100*st.OrdersPerSec/bound, bound)
	fmt.Fprintf(w, "rejection     %d sold_out after the last sale in %.2fs: %s\n", st.Rejections, st.RejectSeconds, fmtRate(st.RejectionsPerSec))
	fmt.Fprintf(w, "fairness      %d inversions (sold_out sent > %v before the last buyer's request): %.2f%% of bought and sold_out\n",
		st.Inversions, labrun.InversionSlack, 100*st.InversionShare)
	if a := r.Audit; a != nil {
		if x := a.API; x != nil {
			printAudit(w, "API", apiSale(x))
		}
		if x := a.Direct; x != nil {
			printAudit(w, "direct", *x)
		}
		if b := a.Buyers; b != nil {
			fmt.Fprintf(w, "audit buyers  %s\n", b)
		}
	}
	if h := r.History; h != nil {
		h.print(w, "history       ")
	}
	if r.Opening != nil {
		r.Opening.print(w)
	}
	fmt.Fprintf(w, "verdict       %s\n", r.Verdict.Label)
	for _, p := range r.Verdict.Problems {
		fmt.Fprintf(w, "  - %s\n", p)
	}
}

// PrintTable writes the comparison table.
func PrintTable(w io.Writer, rep Report) {
	fmt.Fprintf(w, "%s: %s", rep.Command, rep.Scenario.describe())
	if n := len(rep.Rounds); n > 1 {
		fmt.Fprintf(w, "; medians of %d runs (oversold, dupes, errors: the worst run)", n)
	}
	fmt.Fprintln(w)
	bound := orderBound(rep.Scenario.ThinkMS)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "strategy\torders/s\tvs bound\trej/s\tp50\tp99\tp99 corr\tp99 buy\tbought\taccepted\tsold_out\talready\tbusy\tinv\toversold\tdupes\terrors\tverdict")
	for _, r := range rep.Summary {
		orders, vs := "-", "-"
		if r.Bought+r.Accepted > 0 {
			orders, vs = fmt.Sprintf("%.0f", r.OrdersPerSec), fmt.Sprintf("%.0f%%", 100*r.OrdersPerSec/bound)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%.1f%%\t%d\t%d\t%d\t%s\n",
			r.Name, orders, vs, num(r.RejectionsPerSec), fmtMS(r.P50), fmtMS(r.P99), dashIfZero(r.P99Corrected), dashIfZero(r.P99Bought),
			r.Bought, r.Accepted, r.SoldOut, r.Already, r.Busy, 100*r.InversionShare, r.Oversold, r.Dupes, r.Errors, r.Verdict)
	}
	tw.Flush()
	fmt.Fprintf(w, "p99 corr: p99 from each request's intended start (%s)\n", correctionNote(rep.Scenario))
	printHeldBack(w, rep.Rounds, rep.Scenario.MaxWorkers)
	printErrors(w, rep.Rounds)
	fmt.Fprintln(w, "accepted: 202, queued and written after the answer (queue strategy); orders/s counts bought and accepted")
	fmt.Fprintf(w, "inv: inversions, sold_out answers to requests sent more than %v before the last request that bought\n", labrun.InversionSlack)
	fmt.Fprintf(w, "vs bound: orders/s against %.0f orders/s, the most a design holding the lock for one order at a time\n"+
		"can sell of one product at think_ms %d (%.2f ms Redis + transaction + think per order)\n", bound, rep.Scenario.ThinkMS, perOrderMS)
	if line := backendsLine(rep.Summary); line != "" {
		fmt.Fprintf(w, "lock backends, the same scenario back to back in each round: %s\n", line)
	}
	var api, gin float64
	for _, r := range rep.Summary {
		switch r.Name {
		case SoldOutRowName:
			api = r.RejectionsPerSec
		case GinBaselineName:
			gin = r.RejectionsPerSec
		}
	}
	if api > 0 && gin > 0 {
		fmt.Fprintf(w, "sold-out rejection: the API answers %.0f req/s, %.0f%% of a bare gin handler's %.0f req/s on the same load\n",
			api, 100*api/gin, gin)
	}
	printHistories(w, rep.Rounds)
	var failed []string
	for _, r := range rep.Summary {
		if !r.OK {
			failed = append(failed, r.Name)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "FAIL: %s\n", strings.Join(failed, ", "))
		for _, round := range rep.Rounds {
			for _, r := range round {
				for _, p := range r.Verdict.Problems {
					fmt.Fprintf(w, "  %s: %s\n", r.Name, p)
				}
			}
		}
	} else {
		fmt.Fprintln(w, "PASS: no safe strategy oversold, sold a user twice or left the audit inconsistent")
	}
}

// printAudit writes the figures of one audit, and of the gate or the queue when it read one.
func printAudit(w io.Writer, source string, x audit.Sale) {
	fmt.Fprintf(w, "audit %-7s initial %d  stock %d  orders %d  sold %d  oversold %d  duplicate users %d  consistent %s\n",
		source, x.InitialStock, x.Stock, x.Orders, x.Sold, x.Oversold, x.DuplicateUsers, yes(x.Consistent))
	if g := x.Gate; g != nil {
		fmt.Fprintf(w, "              redis gate: stock %d (seeded %s)  buyers %d  pending %d  agrees %s\n",
			g.Stock, yes(g.Seeded), g.Buyers, g.Pending, yes(g.Agrees))
	}
	if q := x.Queue; q != nil {
		fmt.Fprintf(w, "              redis queue: stock %d (seeded %s)  buyers %d  queued %d  dead %d  agrees %s\n",
			q.Stock, yes(q.Seeded), q.Buyers, q.Queued, q.Dead, yes(q.Agrees))
	}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("-json: %w", err)
	}
	return nil
}
