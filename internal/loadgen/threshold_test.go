package loadgen

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
)

// run of name with requests, errs of them 5xx and the rest sold out.
func thresholdRun(name, strategy string, requests, errs int64) RunReport {
	r := RunReport{Name: name, Strategy: strategy}
	r.Stats.Requests = requests
	r.Stats.Outcomes[ServerError], r.Stats.Outcomes[SoldOut] = errs, requests-errs
	return r
}

// TestThresholdsJudge: each threshold is judged on every row of the API, orders/s only on
// those that had stock to sell, the error rate in the worst run; the bare gin row is never
// judged. Answers a flash sale gives on purpose are not errors.
func TestThresholdsJudge(t *testing.T) {
	rate := 0.05
	th := Thresholds{MaxP99: 100 * time.Millisecond, MaxErrorRate: &rate, MinOrdersPerSec: 50}
	rounds := [][]RunReport{
		{thresholdRun("dlock", "dlock", 100, 1), thresholdRun(SoldOutRowName, "dlock", 100, 0), thresholdRun(GinBaselineName, "", 100, 90)},
		{thresholdRun("dlock", "dlock", 100, 10), thresholdRun(SoldOutRowName, "dlock", 100, 0), thresholdRun(GinBaselineName, "", 100, 90)},
	}
	summary := []SummaryRow{
		{Name: "dlock", Strategy: "dlock", P99: 80, OrdersPerSec: 40},
		{Name: SoldOutRowName, Strategy: "dlock", P99: 120},
		{Name: GinBaselineName, P99: 500},
	}
	var got []string
	for _, r := range th.judge(summary, rounds) {
		got = append(got, map[bool]string{true: "pass ", false: "FAIL "}[r.Pass]+r.String())
	}
	want := []string{
		"pass dlock: p99 80.0ms (limit 100ms)",
		"FAIL dlock: error rate 10% (10 of 100 requests; limit 5%)",
		"FAIL dlock: orders/s 40 (limit at least 50)",
		"FAIL sold out (stock 0): p99 120.0ms (limit 100ms)",
		"pass sold out (stock 0): error rate 0% (0 of 100 requests; limit 5%)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("judged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := thresholdsErr(th.judge(summary, rounds)); !errors.Is(err, ErrThresholds) {
		t.Fatalf("err = %v, want ErrThresholds", err)
	}
	if res := (Thresholds{}).judge(summary, rounds); res != nil || thresholdsErr(res) != nil {
		t.Fatalf("no thresholds judged %v", res)
	}

	var c Counts
	for o := range NumOutcomes {
		c[o] = 1
	}
	// 5xx (including 503 unavailable and outcome_unknown), no answer, other 4xx, unexpected.
	if got := c.Errors(); got != 6 {
		t.Fatalf("errors among one of each outcome = %d, want 6 (not bought, accepted, sold_out, already_purchased, busy, 429)", got)
	}
}

// TestVerdictExistingProduct: the orders an existing product had before the run (-product)
// are not the run's; without counting them out, the verdict would see orders no buyer was
// answered for (the negative control).
func TestVerdictExistingProduct(t *testing.T) {
	var st RunStats
	st.Outcomes[Bought], st.Outcomes[SoldOut] = 25, 100
	a := auditReport{API: &api.Audit{InitialStock: 30, Stock: 0, Orders: 30, Sold: 30, Consistent: true}, OrdersBefore: 5}
	if v := judge("dlock", st, a, false); !v.OK {
		t.Fatalf("verdict %+v, want PASS: 25 bought in the run, 5 orders before it", v)
	}
	a.OrdersBefore = 0
	if v := judge("dlock", st, a, false); v.OK || !strings.Contains(strings.Join(v.Problems, ";"), "30 orders exist but only 25 buyers") {
		t.Fatalf("verdict %+v, want a FAIL for 5 orders nobody was answered 201 for", v)
	}
}

// TestThresholdLimits: a share reads as a fraction or a percentage; limits no figure can
// meet are refused.
func TestThresholdLimits(t *testing.T) {
	for in, want := range map[string]float64{"0": 0, "0.001": 0.001, "0.1%": 0.001, "15%": 0.15} {
		if got, err := ParseShare(in); err != nil || got != want {
			t.Errorf("ParseShare(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := ParseShare("some"); err == nil {
		t.Error(`ParseShare("some") accepted it`)
	}
	two, minus := 2.0, -0.1
	for _, th := range []Thresholds{{MaxErrorRate: &two}, {MaxErrorRate: &minus}, {MaxP99: -time.Second}, {MinOrdersPerSec: -1}} {
		if th.validate(10*time.Second) == nil {
			t.Errorf("%+v accepted", th)
		}
	}
	// A request cut by -timeout counts at it: a -max-p99 above the timeout could pass a
	// service that never answers.
	if err := (Thresholds{MaxP99: 3 * time.Second}).validate(time.Second); err == nil || !strings.Contains(err.Error(), "-timeout 1s is below -max-p99 3s") {
		t.Errorf("-max-p99 3s with -timeout 1s: %v", err)
	}
	if err := (Thresholds{MaxP99: 3 * time.Second}).validate(3 * time.Second); err != nil {
		t.Errorf("-max-p99 3s with -timeout 3s: %v", err)
	}
}
