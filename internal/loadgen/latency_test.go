package loadgen

import (
	"bufio"
	"bytes"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHistogramMemoryBounded: a histogram's memory does not grow with what it records: 50
// million synthetic latencies (a long run) leave its size and the heap where they were; the
// tally's sold_out times grow with the run's milliseconds, not its requests.
func TestHistogramMemoryBounded(t *testing.T) {
	h := newHist()
	size := h.ByteSize()
	if size > 512<<10 {
		t.Fatalf("an empty histogram takes %d bytes, want at most 512 KiB", size)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	x := uint64(1)
	const n = 50_000_000
	for range n {
		x = x*6364136223846793005 + 1442695040888963407 // an LCG: latencies from 1 µs to about 17 s
		record(h, time.Duration(x>>40)*time.Microsecond)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if h.TotalCount() != n || h.ByteSize() != size {
		t.Fatalf("recorded %d values in %d bytes; want %d in %d", h.TotalCount(), h.ByteSize(), n, size)
	}
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 1<<20 {
		t.Errorf("the heap grew by %d bytes over %d values, want less than 1 MiB", grew, n)
	}

	ta := newTally()
	for i := range 5_000_000 { // 5 million answers over 10 s
		o := SoldOut
		if i%100_000 == 0 {
			o = Bought
		}
		ta.add(time.Duration(i)*2*time.Microsecond, time.Millisecond, time.Millisecond, o)
	}
	if len(ta.soldOutMS) > 10_001 || len(ta.admittedAt) != 50 || ta.raw.ByteSize() != size {
		t.Errorf("tally kept %d sold_out milliseconds and %d admitted times, histogram %d bytes; want ≤ 10001, 50, %d",
			len(ta.soldOutMS), len(ta.admittedAt), ta.raw.ByteSize(), size)
	}
}

// TestLatenciesOf: the figures read from a histogram are within its 3 significant digits of
// the exact ones.
func TestLatenciesOf(t *testing.T) {
	t.Parallel()
	h := newHist()
	for i := 1; i <= 1000; i++ {
		record(h, time.Duration(i)*time.Millisecond)
	}
	l := latenciesOf(h)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"p50", l.P50, 500}, {"p90", l.P90, 900}, {"p99", l.P99, 990}, {"max", l.Max, 1000}, {"mean", l.Mean, 500.5}} {
		if math.Abs(c.got-c.want) > c.want/1000 {
			t.Errorf("%s = %v ms, want %v ±0.1%%", c.name, c.got, c.want)
		}
	}
	if (latenciesOf(newHist()) != Latencies{}) {
		t.Error("an empty histogram has figures")
	}
}

// TestCorrectedCopy: a closed run's after-the-fact correction adds, for a value of 10 intervals,
// the 9 requests that would have been sent while it ran; values under the interval stay alone.
func TestCorrectedCopy(t *testing.T) {
	t.Parallel()
	h := newHist()
	record(h, 100*time.Millisecond)
	record(h, 5*time.Millisecond)
	c := correctedCopy(h, 10*time.Millisecond)
	if c.TotalCount() != 11 {
		t.Errorf("corrected holds %d values, want 1 + 10 (100, 90, ..., 10 ms)", c.TotalCount())
	}
	if c.Max() < h.Max() || latenciesOf(c).P50 < latenciesOf(h).P50 {
		t.Error("the correction lowered a figure")
	}
}

// TestHgrmParsesBack: -hist writes HdrHistogram's percentile distribution: a header, lines of
// value (ms), percentile, total count and 1/(1-percentile), rising, and the footer with the
// count; the value at the 99th percentile is the histogram's p99.
func TestHgrmParsesBack(t *testing.T) {
	t.Parallel()
	h := newHist()
	for i := 1; i <= 10_000; i++ {
		record(h, time.Duration(i)*100*time.Microsecond) // 0.1 ms to 1 s
	}
	var b bytes.Buffer
	if err := writeHgrm(&b, h); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&b)
	var rows [][4]float64
	var footer string
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "Value"):
		case strings.HasPrefix(line, "#"):
			footer += line
		default:
			f := strings.Fields(line)
			if len(f) != 4 {
				t.Fatalf("line %q: want 4 fields", line)
			}
			var row [4]float64
			for i, s := range f {
				v, err := strconv.ParseFloat(s, 64)
				if err != nil && s != "inf" {
					t.Fatalf("line %q: %v", line, err)
				}
				row[i] = v
			}
			rows = append(rows, row)
		}
	}
	if len(rows) < 10 || !strings.Contains(footer, "Total count    =        10000") {
		t.Fatalf("%d rows, footer %q", len(rows), footer)
	}
	p99 := -1.0
	for i, r := range rows {
		if i > 0 && (r[0] < rows[i-1][0] || r[1] < rows[i-1][1] || r[2] < rows[i-1][2]) {
			t.Fatalf("row %d %v falls below row %d %v", i, r, i-1, rows[i-1])
		}
		if p99 < 0 && r[1] >= 0.99 {
			p99 = r[0]
		}
	}
	if last := rows[len(rows)-1]; last[1] != 1 || last[2] != 10000 {
		t.Errorf("last row %v, want percentile 1 and count 10000", last)
	}
	if want := latenciesOf(h).P99; math.Abs(p99-want) > want/1000 {
		t.Errorf("value at the 99th percentile %v ms, want the histogram's p99 %v ms", p99, want)
	}
}
