package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat: clock ticks of USER_HZ, which
// Linux fixes at 100 a second for every architecture's user space.
const userHZ = 100

// procTicks is what /proc/<pid>/stat says of one process: its command name and the CPU time
// it has used, user and system, in ticks of userHZ.
type procTicks struct {
	comm  string
	ticks int64
}

// procSnapshot is every process of the machine at one moment, by pid.
type procSnapshot map[int]procTicks

// readProcs reads /proc/<pid>/stat of every process. A process that ends while it is read is
// left out.
func readProcs() (procSnapshot, error) {
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	snap := procSnapshot{}
	for _, e := range dir {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // ended meanwhile
		}
		if p, err := parseProcStat(b); err == nil {
			snap[pid] = p
		}
	}
	if len(snap) == 0 {
		return nil, errors.New("/proc: no process could be read")
	}
	return snap, nil
}

// parseProcStat reads the command name (between the first "(" and the last ")", since it may
// hold both) and utime + stime (the 14th and 15th fields) of a /proc/<pid>/stat line.
func parseProcStat(b []byte) (procTicks, error) {
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procTicks{}, errors.New("stat: no command name")
	}
	f := strings.Fields(string(b[end+1:])) // from the 3rd field, state
	if len(f) < 13 {
		return procTicks{}, errors.New("stat: too few fields")
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return procTicks{}, fmt.Errorf("stat: %w", err)
	}
	return procTicks{comm: string(b[open+1 : end]), ticks: utime + stime}, nil
}

// usedSince is the CPU time each command used between before and s, in ticks: a process
// started meanwhile counts from zero, and so does a pid reused by another command. A process
// that ended meanwhile is not counted: short-lived processes are missed. Kernel threads are
// counted by kind (kworker/1:5-events and kworker/u8:3-writeback as kworker): their names
// carry their CPU and current work.
func (s procSnapshot) usedSince(before procSnapshot) map[string]int64 {
	used := map[string]int64{}
	for pid, p := range s {
		d := p.ticks
		if b, ok := before[pid]; ok && b.comm == p.comm {
			d -= b.ticks
		}
		if d > 0 {
			name, _, _ := strings.Cut(p.comm, "/")
			used[name] += d
		}
	}
	return used
}

// otherCommands names, in cpuPerAnswer, the commands that each used less than a twentieth of
// the total: kernel threads, other tenants, short tools.
const otherCommands = "other"

// cpuPerAnswer is the CPU time each command used over runs, in microseconds per answer
// received: ticks by command over answers. Commands below a twentieth of the total are summed
// under otherCommands. Nil when nothing was measured.
func cpuPerAnswer(ticks map[string]int64, answers int64) map[string]float64 {
	var total int64
	for _, t := range ticks {
		total += t
	}
	if total == 0 || answers == 0 {
		return nil
	}
	us := func(t int64) float64 { return float64(t) * 1e6 / userHZ / float64(answers) }
	out := map[string]float64{}
	for c, t := range ticks {
		if 20*t < total {
			c = otherCommands
		}
		out[c] += us(t)
	}
	return out
}

// formatCPU writes a cpuPerAnswer map as "api 135, postgres 30, other 6 (total 171) us an
// answer", the largest first and otherCommands last; "" for nil.
func formatCPU(m map[string]float64) string {
	if len(m) == 0 {
		return ""
	}
	names := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		switch {
		case a == otherCommands:
			return 1
		case b == otherCommands:
			return -1
		case m[a] != m[b]:
			if m[a] > m[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	var total float64
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %.0f", n, m[n])
		total += m[n]
	}
	return fmt.Sprintf("%s (total %.0f) us an answer", strings.Join(parts, ", "), total)
}

// printCPU writes the line of an attack's CPU time by command to w, if it was measured.
func printCPU(w io.Writer, name string, st runStats) {
	if c := formatCPU(cpuPerAnswer(st.CPUTicks, st.answered())); c != "" {
		fmt.Fprintf(w, "[%s] CPU by command: %s\n", name, c)
	}
}
