package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/seckill/seckill/internal/buildinfo"
)

// BuildReport is the loadtest binary that measured.
type BuildReport struct {
	Version  string `json:"version"`
	Revision string `json:"revision"`
	Time     string `json:"time"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

func readBuild() BuildReport {
	b := buildinfo.Read()
	return BuildReport{Version: b.Version, Revision: b.Revision, Time: b.Time, Modified: b.Modified, Go: b.GoVersion}
}

// Machine is where the measurement ran; empty fields could not be read.
type Machine struct {
	Host        string `json:"host"`
	CPUModel    string `json:"cpu_model,omitempty"`
	Cores       int    `json:"cores"`
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	Kernel      string `json:"kernel,omitempty"`
	PostgreSQL  string `json:"postgresql,omitempty"` // SHOW server_version
	Redis       string `json:"redis,omitempty"`      // INFO server: redis_version
}

// readMachine describes this machine and, through aud's connections, the servers' versions.
func readMachine(ctx context.Context, aud *auditor) Machine {
	m := Machine{Cores: runtime.NumCPU()}
	m.Host, _ = os.Hostname()
	m.Host, _, _ = strings.Cut(m.Host, ".")
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPUModel = procField(b, "model name")
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		kb, _ := strconv.ParseInt(strings.TrimSuffix(procField(b, "MemTotal"), " kB"), 10, 64)
		m.MemoryBytes = kb << 10
	}
	ostype, err1 := os.ReadFile("/proc/sys/kernel/ostype")
	release, err2 := os.ReadFile("/proc/sys/kernel/osrelease")
	if err1 == nil && err2 == nil {
		m.Kernel = strings.TrimSpace(string(ostype)) + " " + strings.TrimSpace(string(release))
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if aud.pg != nil {
		_ = aud.pg.QueryRowContext(ctx, "SHOW server_version").Scan(&m.PostgreSQL)
	}
	if aud.rdb != nil {
		if info, err := aud.rdb.Info(ctx, "server").Result(); err == nil {
			m.Redis = procField([]byte(info), "redis_version")
		}
	}
	return m
}

// procField returns the value of the first "key: value" (or "key:value") line of b whose key
// is key, trimmed; "" when there is none.
func procField(b []byte, key string) string {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// CPUTime is the machine's CPU time over the attacks in /proc/stat ticks, steal included.
type CPUTime struct {
	Ticks        int64   `json:"ticks"`
	StealTicks   int64   `json:"steal_ticks"`
	StealPercent float64 `json:"steal_percent"`
}

// Add adds the ticks of o and recomputes the share.
func (c *CPUTime) Add(o CPUTime) {
	c.Ticks += o.Ticks
	c.StealTicks += o.StealTicks
	c.StealPercent = 0
	if c.Ticks > 0 {
		c.StealPercent = 100 * float64(c.StealTicks) / float64(c.Ticks)
	}
}

// cpuMeter adds up the machine's CPU time over the attacks of one invocation. It is not safe
// for concurrent use: the attacks run one after the other.
type cpuMeter struct {
	total  CPUTime
	broken bool // /proc/stat could not be read once: the total means nothing
}

// measure returns a function that, called after the attack, adds the time since measure,
// and returns the CPU time each command of the machine used meanwhile (procSnapshot.usedSince;
// nil where /proc cannot be read).
func (m *cpuMeter) measure() (done func() map[string]int64) {
	t0, s0, err := readCPUTicks()
	procs0, perr := readProcs()
	return func() map[string]int64 {
		var used map[string]int64
		if procs1, err := readProcs(); err == nil && perr == nil {
			used = procs1.usedSince(procs0)
		}
		t1, s1, err1 := readCPUTicks()
		if err != nil || err1 != nil {
			m.broken = true
			return used
		}
		m.total.Add(CPUTime{Ticks: t1 - t0, StealTicks: s1 - s0})
		return used
	}
}

// result is the total, or nil when it could not be measured.
func (m *cpuMeter) result() *CPUTime {
	if m.broken || m.total.Ticks == 0 {
		return nil
	}
	t := m.total
	return &t
}

// readCPUTicks reads the busy-or-idle and the steal ticks of all CPUs from /proc/stat.
func readCPUTicks() (total, steal int64, err error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	return parseCPUTicks(b)
}

// parseCPUTicks reads the "cpu" line of /proc/stat: user nice system idle iowait irq softirq
// steal (guest and guest_nice, counted within user and nice, are left out).
func parseCPUTicks(b []byte) (total, steal int64, err error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, errors.New("/proc/stat: no cpu line")
	}
	for i, s := range f[1:9] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %w", err)
		}
		total += n
		if i == 7 {
			steal = n
		}
	}
	return total, steal, nil
}
