package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// writeBenchRecord writes the record of make bench: the machine, the versions, the command,
// and the table compare printed, of the compare report rep; jsonLink is the report's path
// relative to the record.
func writeBenchRecord(w io.Writer, rep report, stamp, jsonLink string) {
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
	printTable(w, rep)
	fmt.Fprintln(w, "```")
	fmt.Fprintf(w, "\nEvery run, with per-outcome latencies, the API's and the direct audits: [%s](%s).\n", jsonLink, jsonLink)
}

// writeHotRecord writes the record of make bench-hot: one row per compare report (one per
// strategy it ran) and per baseline report (its ceiling), in the order of reps, under the
// machine and the scenario of the first compare report, and the CPU steal over them all.
func writeHotRecord(w io.Writer, reps []report, stamp string) {
	first := reps[0]
	for _, r := range reps {
		if r.Command == "compare" {
			first = r
			break
		}
	}
	sc, m := first.Scenario, first.Machine
	fmt.Fprintf(w, "# Hot product, dlock strategy, group commit on and off (%s)\n\n", stamp)
	fmt.Fprintf(w, "- machine: %s, %d cores; %s\n", orUnknown(m.CPUModel), m.Cores, orUnknown(first.Build.Go))
	fmt.Fprintf(w, "- %s API processes, one product (stock %s: never sells out), think_ms %d,\n",
		numberWord(len(sc.Targets)), thousands(sc.Stock), sc.ThinkMS)
	fmt.Fprintf(w, "  %s %% repeat buyers, each attack %s, medians of %d runs; commit %s\n\n",
		strconv.FormatFloat(100*sc.RepeatShare, 'f', -1, 64), sc.Duration, len(first.Rounds), commit(first.Build))
	fmt.Fprintln(w, "| BATCH_MAX | buyers at once | orders/s | p99 (ms) | p99 of purchases (ms) | oversold | dupes | errors |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	var cpu cpuTime
	measured := true
	for _, r := range reps {
		if r.CPU == nil {
			measured = false
		} else {
			cpu.add(*r.CPU)
		}
		buyers := strconv.Itoa(r.Scenario.Workers)
		if r.Scenario.Rate > 0 {
			buyers = fmt.Sprintf("open loop, %d requests/s", r.Scenario.Rate)
		}
		for _, row := range r.Summary {
			switch {
			case row.Name == ginBaselineName:
				fmt.Fprintf(w, "| %s (ceiling) | %s | %.0f answers/s | %.1f | - | - | - | %d |\n",
					ginBaselineName, buyers, row.RejectionsPerSec, row.P99, row.Errors)
			case r.Command == "compare" && row.Strategy != "" && row.Name != soldOutRowName:
				fmt.Fprintf(w, "| %s | %s | %.0f | %.1f | %.1f | %d | %d | %d |\n",
					orUnknown(r.Meta["batch_max"]), buyers, row.OrdersPerSec, row.P99, row.P99Bought, row.Oversold, row.Dupes, row.Errors)
			}
		}
	}
	total := &cpu
	if !measured {
		total = nil
	}
	fmt.Fprintf(w, "\nCPU steal (time the hypervisor gave to other guests) during the measurements: %s\n", steal(total))
}

// commandLine is the loadtest command of rep as it could be typed again.
func commandLine(rep report) string {
	return shellLine(append([]string{"bin/loadtest", rep.Command}, rep.Flags...))
}

// shellLine joins words into a command line a POSIX shell splits back into them.
func shellLine(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shellQuote(w)
	}
	return strings.Join(quoted, " ")
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,:/@%+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// commit is the build's commit as git abbreviates it, with "(uncommitted changes)" when the
// tree was modified.
func commit(b buildReport) string {
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

func steal(c *cpuTime) string {
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
