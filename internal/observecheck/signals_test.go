package observecheck_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

// threshold is an alert term's comparison with its threshold, at its end.
var threshold = regexp.MustCompile(`^(.*\S)\s+(==|!=|>=|<=|>|<)\s+\S.*$`)

// signals returns the signals of an alert expression: the rules write every alert as
// `<signal> <op> <threshold>`, or such terms joined by `and` / `or`; each term's part before
// its threshold is a signal. A term with no comparison outside parentheses (absent(...)) has
// none.
func signals(expr string) []string {
	var out []string
	for _, term := range topLevelTerms(expr) {
		if m := threshold.FindStringSubmatch(strings.TrimSpace(term)); m != nil && depth0(term, len(m[1])) {
			out = append(out, m[1])
		}
	}
	return out
}

// topLevelTerms splits expr at each " and " and " or " outside parentheses and braces.
func topLevelTerms(expr string) []string {
	var terms []string
	depth, start := 0, 0
	for i := 0; i < len(expr); i++ {
		switch expr[i] {
		case '(', '{', '[':
			depth++
		case ')', '}', ']':
			depth--
		case ' ':
			if depth != 0 {
				continue
			}
			for _, op := range []string{" and ", " or "} {
				if strings.HasPrefix(expr[i:], op) {
					terms = append(terms, expr[start:i])
					start = i + len(op)
					i += len(op) - 1
					break
				}
			}
		}
	}
	return append(terms, expr[start:])
}

// depth0 reports whether position n of term (where its comparison starts) is outside every
// parenthesis.
func depth0(term string, n int) bool {
	term = strings.TrimSpace(term)
	return strings.Count(term[:n], "(") == strings.Count(term[:n], ")")
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
		{`a > 14.4 * 0.001 and b > 14.4 * 0.001 or c > 6 * 0.001 and d > 6 * 0.001`, []string{"a", "b", "c", "d"}},
		{`absent(up{job="seckill-api"} == 1)`, nil},
		{`count(up == 1) < scalar(m)`, []string{`count(up == 1)`}},
		{`x{code=~"5..", a="b or c"} > 0`, []string{`x{code=~"5..", a="b or c"}`}},
	} {
		if got := signals(tt.expr); !slices.Equal(got, tt.want) {
			t.Errorf("signals(%s) = %q, want %q", tt.expr, got, tt.want)
		}
	}
}
