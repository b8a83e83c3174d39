package observecheck_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// threshold is an alert expression's comparison with its threshold, at its end. The rules
// write every alert as `<signal> <op> <threshold>`, or such terms joined by " and ".
var threshold = regexp.MustCompile(`^(.*\S)\s+(==|!=|>=|<=|>|<)\s+\S.*$`)

// signals returns the signals of an alert expression: each term's part before its threshold.
func signals(expr string) []string {
	var out []string
	for term := range strings.SplitSeq(expr, " and ") {
		if m := threshold.FindStringSubmatch(strings.TrimSpace(term)); m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// TestSignals: the signals are what the sale test evaluates for data; a threshold left in
// would make a healthy sale's signal empty.
func TestSignals(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		expr string
		want []string
	}{
		{`up{job="seckill-api"} == 0`, []string{`up{job="seckill-api"}`}},
		{`sum by (instance) (rate(x{route="/readyz", code!="200"}[1m])) > 0`, []string{`sum by (instance) (rate(x{route="/readyz", code!="200"}[1m]))`}},
		{`a:p99{route="/p"} > scalar(a:target)`, []string{`a:p99{route="/p"}`}},
		{`min_over_time(b[5m]) > 0 and delta(b[5m]) >= 0`, []string{`min_over_time(b[5m])`, `delta(b[5m])`}},
	} {
		if got := signals(tt.expr); !slices.Equal(got, tt.want) {
			t.Errorf("signals(%s) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}
