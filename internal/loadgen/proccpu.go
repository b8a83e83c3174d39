package loadgen

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/prometheus/procfs"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat (procfs.ProcStat's UTime and STime):
// clock ticks of USER_HZ, which Linux fixes at 100 a second for every architecture's user
// space, as procfs.ProcStat.CPUTime assumes too.
const userHZ = 100

// procCPU is what a snapshot keeps of one process: its command name and CPU time.
type procCPU struct {
	Comm  string // the command name, at most 15 bytes
	Ticks int64  // CPU time used, user and system, in ticks of userHZ
}

// procSnapshot is every process of the machine at one moment, by pid.
type procSnapshot map[int]procCPU

// readProcs reads /proc/<pid>/stat of every process. A process that ends while it is read is
// left out.
func readProcs() (procSnapshot, error) {
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil, err
	}
	snap := procSnapshot{}
	for _, p := range procs {
		if s, err := p.Stat(); err == nil {
			snap[p.PID] = procCPU{Comm: s.Comm, Ticks: int64(s.UTime + s.STime)} // else it ended meanwhile
		}
	}
	if len(snap) == 0 {
		return nil, errors.New("/proc: no process could be read")
	}
	return snap, nil
}

// usedSince is the CPU time each command used between before and s, in ticks: a process
// started meanwhile counts from zero, and so does a pid reused by another command. A process
// that ended meanwhile is not counted: short-lived processes are missed. Kernel threads are
// counted by kind (kworker/1:5-events and kworker/u8:3-writeback as kworker): their names
// carry their CPU and current work.
func (s procSnapshot) usedSince(before procSnapshot) map[string]int64 {
	used := map[string]int64{}
	for pid, p := range s {
		d := p.Ticks
		if b, ok := before[pid]; ok && b.Comm == p.Comm {
			d -= b.Ticks
		}
		if d > 0 {
			name, _, _ := strings.Cut(p.Comm, "/")
			used[name] += d
		}
	}
	return used
}

// OtherCommands names the commands that each used under a twentieth of the CPU.
const OtherCommands = "other"

// cpuPerAnswer is the CPU time each command used over runs, in microseconds per answer
// received: ticks by command over answers. Commands below a twentieth of the total are summed
// under OtherCommands. Nil when nothing was measured.
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
			c = OtherCommands
		}
		out[c] += us(t)
	}
	return out
}

// FormatCPU formats a CPU-per-answer map, largest first; "" for nil.
func FormatCPU(m map[string]float64) string {
	if len(m) == 0 {
		return ""
	}
	rank := func(n string) float64 { // the largest first, OtherCommands last
		if n == OtherCommands {
			return math.Inf(1)
		}
		return -m[n]
	}
	names := slices.SortedFunc(maps.Keys(m), func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
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
func printCPU(w io.Writer, name string, st RunStats) {
	if c := FormatCPU(cpuPerAnswer(st.CPUTicks, st.Answered())); c != "" {
		fmt.Fprintf(w, "[%s] CPU by command: %s\n", name, c)
	}
}
