package loadgen

import (
	"fmt"
	"io"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HDR histograms of latencies in µs, 3 significant digits; longer ones count as histMaxMicros.
const (
	histMaxMicros = int64(24 * time.Hour / time.Microsecond)
	histDigits    = 3
)

// hdrHist is a latency histogram.
type hdrHist = hdrhistogram.Histogram

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, histMaxMicros, histDigits) }

// record adds d to h, clamped to the histogram's range.
func record(h *hdrhistogram.Histogram, d time.Duration) {
	_ = h.RecordValue(min(max(d.Microseconds(), 1), histMaxMicros)) // in range: cannot fail
}

// latenciesOf reads the figures of h, in milliseconds; all 0 when it is empty.
func latenciesOf(h *hdrhistogram.Histogram) Latencies {
	if h == nil || h.TotalCount() == 0 {
		return Latencies{}
	}
	q := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) / 1000 }
	return Latencies{Mean: h.Mean() / 1000, P50: q(50), P90: q(90), P99: q(99), Max: float64(h.Max()) / 1000}
}

// correctedCopy returns h corrected for coordinated omission after the fact, as HdrHistogram's
// copyCorrectedForCoordinatedOmission does: each value v above interval also stands for the
// requests that would have been sent every interval while it ran, v-interval, v-2·interval...
// It is the estimate of a closed run without a schedule (-workers without -rate), whose
// interval is how often each worker sent on average.
func correctedCopy(h *hdrhistogram.Histogram, interval time.Duration) *hdrhistogram.Histogram {
	c := newHist()
	step := interval.Microseconds()
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		_ = c.RecordValues(b.To, b.Count)
		if step <= 0 {
			continue
		}
		for missing := b.To - step; missing >= step; missing -= step {
			_ = c.RecordValues(missing, b.Count)
		}
	}
	return c
}

// encodeHist is h in HdrHistogram's V2 compressed, base64 form, which every HdrHistogram
// implementation reads (HistogramLogProcessor, hdrhistogram-go's Decode).
func encodeHist(h *hdrhistogram.Histogram) string {
	if h == nil {
		return ""
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil { // only for an unknown version
		panic(err)
	}
	return string(b)
}

// decodeHist reads what encodeHist wrote.
func decodeHist(s string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

// Histograms are a run's encoded latency histograms in µs, which loadtest merge adds up.
type Histograms struct {
	Unit      string `json:"unit"` // "us"
	Raw       string `json:"raw"`
	Corrected string `json:"corrected"`
	// ByOutcome are the raw latencies of each outcome answered, by its name.
	ByOutcome map[string]string `json:"by_outcome,omitempty"`
}

// histograms encodes the histograms of t.
func (t *tally) histograms() Histograms {
	hs := Histograms{Unit: "us", Raw: encodeHist(t.raw), Corrected: encodeHist(t.corrected), ByOutcome: map[string]string{}}
	for o, h := range t.byOutcome {
		if h != nil {
			hs.ByOutcome[Outcome(o).String()] = encodeHist(h)
		}
	}
	return hs
}

// writeHgrm writes h as HdrHistogram's percentile distribution (the .hgrm text that
// HistogramLogProcessor, wrk2 and the online plotter use), in milliseconds.
func writeHgrm(w io.Writer, h *hdrhistogram.Histogram) error {
	_, err := h.PercentilesPrint(w, 5, 1000)
	return err
}
