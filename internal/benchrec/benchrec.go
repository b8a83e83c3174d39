// Package benchrec writes the Markdown of a benchmark record (bench/*.md) from the JSON reports
// of internal/loadgen: make bench's (one compare report: the machine, the versions, the command
// and the table) and make bench-hot's (one row per report, etcd beside Redis, the hot product
// against the sold-out one). cmd/loadtest record is its command line.
package benchrec

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/seckill/seckill/internal/loadgen"
)

// WriteBench writes the record of make bench: the machine, the versions, the command,
// and the table compare printed, of the compare report rep; jsonLink is the report's path
// relative to the record.
func WriteBench(w io.Writer, rep loadgen.Report, stamp, jsonLink string) {
	m, b := rep.Machine, rep.Build
	procs := strconv.Itoa(len(rep.Scenario.Targets))
	if conns := rep.Meta["db_max_conns"]; conns != "" {
		procs += " (DB_MAX_CONNS " + conns + " each)"
	}
	fmt.Fprintf(w, "# Benchmark %s on %s\n\n", stamp, m.Host)
	fmt.Fprintln(w, "| | |")
	fmt.Fprintln(w, "|---|---|")
	fmt.Fprintf(w, "| CPU | %s, %d cores (shared with PostgreSQL, Redis, the APIs and the load generator) |\n", orUnknown(m.CPUModel), m.Cores)
	fmt.Fprintf(w, "| Memory | %s |\n", memory(m.MemoryBytes))
	fmt.Fprintf(w, "| Kernel | %s |\n", orUnknown(m.Kernel))
	fmt.Fprintf(w, "| Go | %s |\n", orUnknown(b.Go))
	fmt.Fprintf(w, "| PostgreSQL | %s |\n", orUnknown(m.PostgreSQL))
	fmt.Fprintf(w, "| Redis | %s |\n", orUnknown(m.Redis))
	fmt.Fprintf(w, "| Commit | %s |\n", commit(b))
	fmt.Fprintf(w, "| API processes | %s |\n", procs)
	fmt.Fprintf(w, "| CPU steal | %s during the attacks |\n", steal(rep.CPU))
	fmt.Fprintf(w, "\nCommand: `%s`\n\n", commandLine(rep))
	fmt.Fprintln(w, "```text")
	loadgen.PrintTable(w, rep)
	fmt.Fprintln(w, "```")
	fmt.Fprintf(w, "\nEvery run, with per-outcome latencies, the API's and the direct audits: [%s](%s).\n", jsonLink, jsonLink)
}

// WriteHot writes the record of make bench-hot to w: a row per compare and per baseline report in
// reps, each hot row set against the sold-out baseline, a table of dlock on both lock backends
// with etcd's ratios to Redis, and the CPU steal.
// bench/README.md#hot-product-records-make-bench-hot says how to read it.
func WriteHot(w io.Writer, reps []loadgen.Report, stamp string) {
	first := reps[0]
	for _, r := range reps {
		if r.Command == "compare" {
			first = r
			break
		}
	}
	sc, m := first.Scenario, first.Machine
	backendsToo := ""
	if slices.ContainsFunc(reps, func(r loadgen.Report) bool { return len(r.Scenario.EtcdTargets) > 0 }) {
		backendsToo = ", locks in Redis and in etcd"
	}
	fmt.Fprintf(w, "# Hot product, dlock strategy, group commit on and off%s (%s)\n\n", backendsToo, stamp)
	fmt.Fprintf(w, "- machine: %s, %d cores; %s\n", orUnknown(m.CPUModel), m.Cores, orUnknown(first.Build.Go))
	fmt.Fprintf(w, "- %s API processes, one product (stock %s: never sells out), think_ms %d,\n",
		numberWord(len(sc.Targets)), thousands(sc.Stock), sc.ThinkMS)
	fmt.Fprintf(w, "  %s %% repeat buyers, each attack %s, medians of %d runs; commit %s\n\n",
		strconv.FormatFloat(100*sc.RepeatShare, 'f', -1, 64), sc.Duration, len(first.Rounds), commit(first.Build))
	fmt.Fprintln(w, "| BATCH_MAX | buyers at once | orders/s | p99 (ms) | p99 of purchases (ms) | oversold | dupes | errors |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	var cpu loadgen.CPUTime
	var backends []string // the rows of the lock backends' table
	hot, soldOut := map[int]loadgen.SummaryRow{}, map[int]loadgen.SummaryRow{}
	hotRounds := map[int][][]loadgen.RunReport{} // the rounds of each hot row's report
	var buyerCounts []int                        // of the hot rows, in order
	measured := true
	for _, r := range reps {
		if r.CPU == nil {
			measured = false
		} else {
			cpu.Add(*r.CPU)
		}
		buyers := strconv.Itoa(r.Scenario.Workers)
		if r.Scenario.Rate > 0 {
			buyers = fmt.Sprintf("open loop, %d requests/s", r.Scenario.Rate)
		}
		for _, row := range r.Summary {
			switch {
			case row.Name == loadgen.GinBaselineName:
				fmt.Fprintf(w, "| %s (ceiling) | %s | %.0f answers/s | %.1f | - | - | - | %d |\n",
					loadgen.GinBaselineName, buyers, row.RejectionsPerSec, row.P99, row.Errors)
			case row.Name == loadgen.SoldOutRowName && (r.Command == "baseline" || r.Scenario.Rate == 0):
				soldOut[r.Scenario.Workers] = row
				fmt.Fprintf(w, "| sold out on the API (stock 0) | %s | %.0f answers/s | %.1f | - | - | - | %d |\n",
					buyers, row.RejectionsPerSec, row.P99, row.Errors)
			case r.Command == "compare" && row.Backend != "":
				backends = append(backends, hotBackendRow(r, row, buyers))
			case r.Command == "compare" && row.Strategy != "" && row.Name != loadgen.SoldOutRowName:
				if _, seen := hot[r.Scenario.Workers]; !seen && r.Scenario.Rate == 0 {
					hot[r.Scenario.Workers] = row
					hotRounds[r.Scenario.Workers] = r.Rounds
					buyerCounts = append(buyerCounts, r.Scenario.Workers)
				}
				fmt.Fprintf(w, "| %s | %s | %.0f | %.1f | %.1f | %d | %d | %d |\n",
					orUnknown(r.Meta["batch_max"]), buyers, row.OrdersPerSec, row.P99, row.P99Bought, row.Oversold, row.Dupes, row.Errors)
			}
		}
	}
	writeHotVsSoldOut(w, buyerCounts, hot, soldOut, hotRounds)
	if len(backends) > 0 {
		fmt.Fprintln(w, "\nLock backends: dlock with its product locks in Redis, then in etcd (API processes with")
		fmt.Fprintln(w, "LOCK_BACKEND=etcd), the same buyers back to back in each round; \"vs Redis\" is the median over")
		fmt.Fprint(w, "the rounds of etcd's figure over Redis's in the same round.")
		if conns := backendsMeta(reps, "db_max_conns"); conns != "" {
			fmt.Fprintf(w, " Each API process had DB_MAX_CONNS %s.", conns)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| lock store | BATCH_MAX | buyers at once | orders/s | vs Redis | p99 (ms) | vs Redis | p99 of purchases (ms) | oversold | dupes | errors |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
		for _, row := range backends {
			fmt.Fprintln(w, row)
		}
	}
	total := &cpu
	if !measured {
		total = nil
	}
	fmt.Fprintf(w, "\nCPU steal (time the hypervisor gave to other guests) during the measurements: %s\n", steal(total))
}

// writeHotVsSoldOut writes, for each number of buyers with both a hot row and a sold-out
// row, the hot product's orders per second, its answers per second (orders and the repeat
// buyers' 409s; reports written before answers_per_sec have none) and its p99 over the
// sold-out product's answers per second and p99: what selling costs beyond the HTTP around it;
// the medians of the rounds' ratios where the hot row's own rounds (hotRounds) ran the sold-out
// product too. Then, where both
// rows measured it, the CPU time each command of the machine used per answer in each
// (summaryRow.CPUPerAnswer): where the difference goes.
func writeHotVsSoldOut(w io.Writer, buyerCounts []int, hot, soldOut map[int]loadgen.SummaryRow, hotRounds map[int][][]loadgen.RunReport) {
	var pairs []string
	inRounds := 0
	for _, n := range buyerCounts {
		s, ok := soldOut[n]
		h := hot[n]
		if !ok || s.RejectionsPerSec <= 0 || s.P99 <= 0 {
			continue
		}
		orders, answersPerSec, p99 := h.OrdersPerSec/s.RejectionsPerSec, h.AnswersPerSec/s.RejectionsPerSec, h.P99/s.P99
		rounds := hotRounds[n]
		isHot := func(r loadgen.RunReport) bool { return r.Name == h.Name }
		isSoldOut := func(r loadgen.RunReport) bool { return r.Name == loadgen.SoldOutRowName }
		if slices.ContainsFunc(rounds, func(round []loadgen.RunReport) bool { return slices.ContainsFunc(round, isSoldOut) }) {
			inRounds = len(rounds)
			rejections := func(r loadgen.RunReport) float64 { return r.Stats.RejectionsPerSec }
			orders = loadgen.MedianRatio(rounds, isHot, isSoldOut, func(r loadgen.RunReport) float64 { return r.Stats.OrdersPerSec }, rejections)
			answersPerSec = loadgen.MedianRatio(rounds, isHot, isSoldOut, func(r loadgen.RunReport) float64 { return r.Stats.Throughput }, rejections)
			p99f := func(r loadgen.RunReport) float64 { return r.Stats.Latency.P99 }
			p99 = loadgen.MedianRatio(rounds, isHot, isSoldOut, p99f, p99f)
		}
		answers := ""
		if h.AnswersPerSec > 0 {
			answers = fmt.Sprintf(" (answers/s %s)", times(answersPerSec))
		}
		pairs = append(pairs, fmt.Sprintf("%d buyers: orders/s %s the sold-out answers/s%s, p99 %s", n, times(orders), answers, times(p99)))
	}
	if len(pairs) > 0 {
		how := ""
		if inRounds > 0 {
			how = fmt.Sprintf(" (the two back to back in each round; each ratio the median of the %d rounds' ratios)", inRounds)
		}
		fmt.Fprintf(w, "\nHot product against the sold-out product on the same processes%s: %s.\n", how, strings.Join(pairs, "; "))
	}
	for _, n := range buyerCounts {
		h, s := hot[n].CPUPerAnswer, soldOut[n].CPUPerAnswer
		if h != nil && s != nil {
			fmt.Fprintf(w, "\nCPU by command, %d buyers (whole machine, load generator included): hot product %s; sold out %s.\n",
				n, loadgen.FormatCPU(h), loadgen.FormatCPU(s))
		}
	}
}

// backendsMeta is the -meta key of the first report of reps that ran dlock on both lock
// backends, empty if none has it.
func backendsMeta(reps []loadgen.Report, key string) string {
	for _, r := range reps {
		if len(r.Scenario.EtcdTargets) > 0 {
			return r.Meta[key]
		}
	}
	return ""
}

// hotBackendRow is the row of the lock backends' table of one backend's summary row of
// compare report r: the store (etcd with its number of members, from -meta etcd_members)
// and, for etcd, its ratios to Redis.
func hotBackendRow(r loadgen.Report, row loadgen.SummaryRow, buyers string) string {
	store, orders, p99 := "Redis", "-", "-"
	if row.Backend == loadgen.BackendEtcd {
		store = "etcd"
		if n := r.Meta["etcd_members"]; n != "" {
			store += ", " + n + " member"
			if n != "1" {
				store += "s"
			}
		}
		if v := row.VsRedis; v != nil {
			orders, p99 = times(v.OrdersPerSec), times(v.P99)
		}
	}
	return fmt.Sprintf("| %s | %s | %s | %.0f | %s | %.1f | %s | %.1f | %d | %d | %d |", store, orUnknown(r.Meta["batch_max"]),
		buyers, row.OrdersPerSec, orders, row.P99, p99, row.P99Bought, row.Oversold, row.Dupes, row.Errors)
}

// commandLine is the loadtest command of rep as it could be typed again.
func commandLine(rep loadgen.Report) string {
	return loadgen.ShellLine(append([]string{"bin/loadtest", rep.Command}, rep.Flags...))
}

// commit is the build's commit as git abbreviates it, with "(uncommitted changes)" when the
// tree was modified.
func commit(b loadgen.BuildReport) string {
	c := b.Revision
	if c == "" || c == "unknown" {
		return "unknown"
	}
	c = c[:min(len(c), 7)]
	if b.Modified {
		c += " (uncommitted changes)"
	}
	return c
}

func steal(c *loadgen.CPUTime) string {
	if c == nil {
		return "unknown"
	}
	return fmt.Sprintf("%.1f %%", c.StealPercent)
}

func memory(bytes int64) string {
	if bytes <= 0 {
		return "unknown"
	}
	return fmt.Sprintf("%.1f GiB", float64(bytes)/(1<<30))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// numberWord spells n from one to ten, as the records' prose does, and writes larger ones in
// digits.
func numberWord(n int) string {
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}

// thousands writes n with a comma between groups of three digits: 50,000,000.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, d := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// times writes a ratio as a factor, "-" for none (as loadgen's tables do).
func times(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", v)
}
