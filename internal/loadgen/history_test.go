package loadgen

import (
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/history"
)

func TestRequestUser(t *testing.T) {
	for body, want := range map[string]int64{`{"user_id":42}`: 42, `{"user_id":7`: 7, `{"user":42}`: 0, ``: 0} {
		if got := requestUser([]byte(body)); got != want {
			t.Errorf("requestUser(%q) = %d, want %d", body, got, want)
		}
	}
}

// TestPrintHistories: compare's table is followed by a history line per run that has one,
// with the run's number when there are several, the reasons and the page.
func TestPrintHistories(t *testing.T) {
	ok := &historyReport{Verdict: history.Linearizable, Linearizable: true, Purchases: 900, Operations: 20, Settled: 880, CheckSeconds: 0.004, Resolved: true}
	bad := &historyReport{Verdict: history.Illegal, Purchases: 800, Operations: 480, Settled: 320, CheckSeconds: 2,
		Reasons: []string{"product 2: 45 purchases took a unit"}, Visualization: "/tmp/p.html"}
	var b strings.Builder
	printHistories(&b, [][]RunReport{{{Name: "dlock", History: ok}, {Name: "ceiling"}}, {{Name: "dlock", History: bad}}})
	want := "history dlock, run 1: linearizable: 900 purchases (ordered 20, settled 880, dropped 0) checked in 4ms, unknown outcomes resolved by PostgreSQL\n" +
		"history dlock, run 2: illegal: 800 purchases (ordered 480, settled 320, dropped 0) checked in 2s\n" +
		"  - product 2: 45 purchases took a unit\n" +
		"  porcupine's page of the history: /tmp/p.html\n"
	if got := b.String(); got != want {
		t.Errorf("printHistories wrote\n%s\nwant\n%s", got, want)
	}
}

// TestAnswerOrder: the history records the order an answer names, from a 201's body or an
// already_purchased problem; none from the others.
func TestAnswerOrder(t *testing.T) {
	for body, want := range map[string]int64{
		`{"id":41,"product_id":3,"user_id":9,"status":"pending"}`:                                41,
		`{"type":"about:blank","status":409,"code":"already_purchased","order_id":7}`:            7,
		`{"type":"about:blank","status":409,"code":"sold_out"}`:                                  0,
		`{"status":"accepted","product_id":3,"user_id":9,"order":"/api/v1/products/3/orders/9"}`: 0,
		`not json`: 0,
	} {
		if got := answerOrder([]byte(body)); got != want {
			t.Errorf("answerOrder(%s) = %d, want %d", body, got, want)
		}
	}
}
