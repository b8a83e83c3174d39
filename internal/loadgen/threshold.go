package loadgen

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ErrThresholds is Execute's error when a threshold failed and every audit passed (exit 4).
var ErrThresholds = errors.New("loadgen: threshold breached")

// Thresholds are -max-p99, -max-error-rate and -min-orders-per-sec (docs/loadtest.md#thresholds);
// the zero value sets none.
type Thresholds struct {
	// MaxP99 is the highest p99 latency of all answers (JudgedP99); 0: none.
	MaxP99 time.Duration
	// MaxErrorRate is the highest share of Counts.Errors in a row's worst run; nil: none.
	MaxErrorRate *float64
	// MinOrdersPerSec is the lowest median orders/s; 0: none.
	MinOrdersPerSec float64
}

// Any reports whether t sets a threshold.
func (t Thresholds) Any() bool { return t.MaxP99 > 0 || t.MaxErrorRate != nil || t.MinOrdersPerSec > 0 }

// validate reports the thresholds no figure can meet or that mean nothing, timeout being each
// request's (-timeout): a request it cuts is counted at it, so a -max-p99 above it could pass
// a service that never answers.
func (t Thresholds) validate(timeout time.Duration) error {
	var errs []error
	if t.MaxP99 < 0 {
		errs = append(errs, fmt.Errorf("-max-p99 %s: want more than 0", t.MaxP99))
	}
	if t.MaxP99 > 0 && timeout > 0 && timeout < t.MaxP99 {
		errs = append(errs, fmt.Errorf("-timeout %s is below -max-p99 %s: a request cut by the timeout counts at %s, so a service that never answers would pass; "+
			"raise -timeout to at least %s", timeout, t.MaxP99, timeout, t.MaxP99))
	}
	if r := t.MaxErrorRate; r != nil && (*r < 0 || *r > 1) {
		errs = append(errs, fmt.Errorf("-max-error-rate %v: want a share in [0,1], such as 0, 0.001 or 0.1%%", *r))
	}
	if t.MinOrdersPerSec < 0 {
		errs = append(errs, fmt.Errorf("-min-orders-per-sec %v: want 0 or more", t.MinOrdersPerSec))
	}
	return errors.Join(errs...)
}

// ParseShare reads a share such as 0, 0.001 or 0.1% (the form of -max-error-rate).
func ParseShare(s string) (float64, error) {
	pct := strings.HasSuffix(s, "%")
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	if err != nil {
		return 0, fmt.Errorf("want a share such as 0, 0.001 or 0.1%%, got %q", s)
	}
	if pct {
		v /= 100
	}
	return v, nil
}

// ThresholdResult is one threshold judged on one summary row.
type ThresholdResult struct {
	Threshold string  `json:"threshold"` // its flag: max-p99, max-error-rate, min-orders-per-sec
	Row       string  `json:"row"`       // the summary row judged
	Unit      string  `json:"unit"`      // ms, share or orders/s
	Limit     float64 `json:"limit"`
	Measured  float64 `json:"measured"`
	// Errors and Requests are the worst run's counts, for max-error-rate.
	Errors   int64 `json:"errors,omitempty"`
	Requests int64 `json:"requests,omitempty"`
	// Unsent and TimedOut are the worst run's unsent and timed-out requests.
	Unsent   int64 `json:"unsent,omitempty"`
	TimedOut int64 `json:"timed_out,omitempty"`
	Pass     bool  `json:"pass"`
}

// JudgedP99 returns the p99 in ms that -max-p99 judges: the corrected one (docs/loadtest.md#latency).
func (r SummaryRow) JudgedP99() float64 { return max(r.P99Corrected, r.P99) }

// judge judges every threshold of t on the rows of summary, the runs of rounds giving the
// error rates; nil when t sets none.
func (t Thresholds) judge(summary []SummaryRow, rounds [][]RunReport) []ThresholdResult {
	var res []ThresholdResult
	for _, row := range summary {
		if row.Strategy == "" {
			continue // the bare gin ceiling: not the API
		}
		if t.MaxP99 > 0 {
			limit := ms(t.MaxP99)
			res = append(res, ThresholdResult{Threshold: "max-p99", Row: row.Name, Unit: "ms", Limit: limit,
				Measured: row.JudgedP99(), Unsent: row.Dropped, TimedOut: row.TimedOut, Pass: row.JudgedP99() <= limit})
		}
		if t.MaxErrorRate != nil {
			r := ThresholdResult{Threshold: "max-error-rate", Row: row.Name, Unit: "share", Limit: *t.MaxErrorRate, Pass: true}
			for _, round := range rounds {
				for _, run := range round {
					if run.Name != row.Name || run.Stats.Requests == 0 {
						continue
					}
					errs, n := run.Stats.Outcomes.Errors(), run.Stats.Requests
					if rate := float64(errs) / float64(n); r.Requests == 0 || rate > r.Measured {
						r.Measured, r.Errors, r.Requests = rate, errs, n
					}
				}
			}
			r.Pass = r.Measured <= r.Limit
			res = append(res, r)
		}
		if t.MinOrdersPerSec > 0 && row.Name != SoldOutRowName {
			res = append(res, ThresholdResult{Threshold: "min-orders-per-sec", Row: row.Name, Unit: "orders/s",
				Limit: t.MinOrdersPerSec, Measured: row.OrdersPerSec, Pass: row.OrdersPerSec >= t.MinOrdersPerSec})
		}
	}
	return res
}

// thresholdsErr is ErrThresholds naming each breach, or nil.
func thresholdsErr(res []ThresholdResult) error {
	var breaches []string
	for _, r := range res {
		if !r.Pass {
			breaches = append(breaches, r.String())
		}
	}
	if len(breaches) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrThresholds, strings.Join(breaches, "; "))
}

// String is r in words: "dlock: p99 45.3ms (limit 200ms)".
func (r ThresholdResult) String() string {
	switch r.Threshold {
	case "max-p99":
		var waits []string
		if r.Unsent > 0 {
			waits = append(waits, fmt.Sprintf("%d arrivals never sent", r.Unsent))
		}
		if r.TimedOut > 0 {
			waits = append(waits, fmt.Sprintf("%d requests cut by -timeout", r.TimedOut))
		}
		counted := ""
		if len(waits) > 0 {
			counted = "; " + strings.Join(waits, " and ") + " counted at their wait"
		}
		return fmt.Sprintf("%s: p99 %s (limit %s%s)", r.Row, fmtMS(r.Measured), time.Duration(r.Limit*float64(time.Millisecond)), counted)
	case "max-error-rate":
		return fmt.Sprintf("%s: error rate %s (%d of %d requests; limit %s)", r.Row, pct(r.Measured), r.Errors, r.Requests, pct(r.Limit))
	}
	return fmt.Sprintf("%s: orders/s %.0f (limit at least %s)", r.Row, r.Measured, strconv.FormatFloat(r.Limit, 'g', -1, 64))
}

func pct(v float64) string { return strconv.FormatFloat(100*v, 'g', 4, 64) + "%" }

// printThresholds writes each threshold's verdict; nothing when none was set.
func printThresholds(w io.Writer, res []ThresholdResult) {
	if len(res) == 0 {
		return
	}
	fmt.Fprintln(w, "thresholds    (a breach exits 4 once the report is written; errors: no HTTP answer, 5xx but 503 busy, 4xx but 409 and 429)")
	failed := 0
	for _, r := range res {
		mark := "pass"
		if !r.Pass {
			mark, failed = "FAIL", failed+1
		}
		fmt.Fprintf(w, "  %-4s %s\n", mark, r)
	}
	if failed > 0 {
		fmt.Fprintf(w, "THRESHOLDS: %d of %d breached\n", failed, len(res))
	} else {
		fmt.Fprintf(w, "THRESHOLDS: all %d passed\n", len(res))
	}
}
