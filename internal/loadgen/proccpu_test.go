package loadgen

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestUsedSince(t *testing.T) {
	t.Parallel()
	before := procSnapshot{
		1: {Comm: "api", Ticks: 100},
		2: {Comm: "api", Ticks: 50},
		3: {Comm: "postgres", Ticks: 10}, // ends: not counted
		4: {Comm: "old", Ticks: 500},     // pid reused by redis-server: counts from zero
	}
	after := procSnapshot{
		1: {Comm: "api", Ticks: 130},
		2: {Comm: "api", Ticks: 50}, // idle: left out
		4: {Comm: "redis-server", Ticks: 7},
		5: {Comm: "postgres", Ticks: 20}, // started meanwhile: counts from zero
		6: {Comm: "kworker/1:5-events", Ticks: 3},
		7: {Comm: "kworker/u8:3-writeback", Ticks: 4},
	}
	want := map[string]int64{"api": 30, "redis-server": 7, "postgres": 20, "kworker": 7}
	if got := after.usedSince(before); !reflect.DeepEqual(got, want) {
		t.Errorf("usedSince = %v, want %v", got, want)
	}
}

func TestCPUPerAnswer(t *testing.T) {
	t.Parallel()
	// 1,000 answers; 100 ticks (1 s) is 1,000 us an answer.
	got := cpuPerAnswer(map[string]int64{"api": 100, "postgres": 40, "kworker/0:1": 4, "kdamond.0": 2}, 1000)
	want := map[string]float64{"api": 1000, "postgres": 400, OtherCommands: 60}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cpuPerAnswer = %v, want %v", got, want)
	}
	if s, w := FormatCPU(got), "api 1000, postgres 400, other 60 (total 1460) us an answer"; s != w {
		t.Errorf("formatCPU = %q, want %q", s, w)
	}
	if cpuPerAnswer(nil, 10) != nil || cpuPerAnswer(map[string]int64{"api": 1}, 0) != nil || FormatCPU(nil) != "" {
		t.Error("nothing measured should give nil and an empty line")
	}
	var b bytes.Buffer
	printCPU(&b, "dlock", RunStats{Requests: 1001, Outcomes: Counts{TransportError: 1}, CPUTicks: map[string]int64{"api": 100}})
	if w := "[dlock] CPU by command: api 1000 (total 1000) us an answer\n"; b.String() != w {
		t.Errorf("printCPU wrote %q, want %q", b.String(), w)
	}
}

// TestReadProcs reads this machine's /proc: the test process itself is in it, under its
// command name, with the CPU time it has used.
func TestReadProcs(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: not Linux")
	}
	before, err := readProcs()
	if err != nil {
		t.Fatal(err)
	}
	self, ok := before[os.Getpid()]
	if !ok || !strings.HasPrefix("loadgen.test", self.Comm) {
		t.Fatalf("this process: %+v, %v; want the command loadgen.test (cut to 15 characters)", self, ok)
	}
	var x uint64
	for i := range uint64(200_000_000) { // about 0.1 s of CPU: more than a tick
		x += i * i
	}
	after, err := readProcs()
	if err != nil {
		t.Fatal(err)
	}
	if used := after.usedSince(before)[self.Comm]; used <= 0 {
		t.Errorf("this process used %d ticks over a busy loop (x=%d)", used, x)
	}
}

// TestReadProcsSelf reads the real /proc through procfs: this process is there, under the
// test binary's name (cut to 15 bytes), with the CPU time it has used so far.
func TestReadProcsSelf(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc: not Linux")
	}
	for start := time.Now(); time.Since(start) < 30*time.Millisecond; { // use some CPU
	}
	snap, err := readProcs()
	if err != nil {
		t.Fatal(err)
	}
	self, ok := snap[os.Getpid()]
	if !ok || self.Comm != "loadgen.test" || self.Ticks <= 0 {
		t.Errorf("this process: %+v (found %v), want loadgen.test with ticks > 0", self, ok)
	}
}
