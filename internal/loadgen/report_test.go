package loadgen

import (
	"bytes"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/audit"
)

func TestJudge(t *testing.T) {
	t.Parallel()
	clean := func() auditReport {
		return auditReport{
			API:    &api.Audit{InitialStock: 10, Stock: 0, Orders: 10, Sold: 10, Consistent: true},
			Direct: &audit.Sale{InitialStock: 10, Stock: 0, Orders: 10, Sold: 10, Consistent: true},
		}
	}
	stats := func(boughtN, transport int64) RunStats {
		var st RunStats
		st.Outcomes[Bought], st.Outcomes[TransportError] = boughtN, transport
		return st
	}
	withOutcome := func(st RunStats, o Outcome, n int64) RunStats {
		st.Outcomes[o] = n
		return st
	}
	// queueAudit is clean with the queue figures of a drained sale of 10, changed by change.
	queueAudit := func(change func(*api.QueueAudit)) func() auditReport {
		return func() auditReport {
			a := clean()
			q := api.QueueAudit{Seeded: true, Stock: 0, Buyers: 10, Agrees: true}
			if change != nil {
				change(&q)
			}
			a.API.Queue, a.Direct.Queue = &q, new(audit.Queue(q))
			a.Direct.Consistent = q.Agrees
			return a
		}
	}
	oversold := func() auditReport {
		a := clean()
		a.API.Orders, a.API.Oversold, a.API.Consistent = 15, 5, false
		a.Direct.Orders, a.Direct.Oversold, a.Direct.Consistent = 15, 5, false
		return a
	}
	tests := []struct {
		name     string
		strategy string
		st       RunStats
		audit    func() auditReport
		expect   bool
		wantOK   bool
		want     string // the label, or a fragment of a problem
	}{
		{"clean", "dlock", stats(10, 0), clean, true, true, "PASS"},
		{"safe oversold", "pessimistic", stats(15, 0), oversold, true, false, "direct audit (PostgreSQL): oversold 5"},
		{"duplicate users", "optimistic", stats(10, 0), func() auditReport {
			a := clean()
			a.Direct.DuplicateUsers, a.Direct.Consistent = 1, false
			return a
		}, true, false, "1 users bought twice"},
		{"API and PostgreSQL disagree", "dlock", stats(10, 0), func() auditReport {
			a := clean()
			a.API.Orders = 9
			return a
		}, true, false, "disagree"},
		{"redis gate disagrees", "redis", stats(10, 0), func() auditReport {
			a := clean()
			a.API.Redis = &api.GateAudit{Seeded: true, Stock: 1, Buyers: 10}
			a.Direct.Gate = &audit.Gate{Seeded: true, Stock: 1, Buyers: 10}
			a.Direct.Consistent = false
			return a
		}, true, false, "Redis gate (stock 1 seeded=true, buyers 10, pending 0) disagrees"},
		{"queue: 201 and 202 answers are the orders", "queue", withOutcome(stats(4, 0), Accepted, 6), queueAudit(nil), true, true, "PASS"},
		{"queue: a 202 without an order", "queue", withOutcome(stats(4, 0), Accepted, 7), queueAudit(nil), true, false,
			"11 buyers answered 201 or 202 but only 10 orders"},
		{"queue: a queued buyer answered 202 twice is one buyer", "queue", func() RunStats {
			st := withOutcome(stats(4, 0), Accepted, 8)
			st.Readmitted = 2
			return st
		}(), queueAudit(nil), true, true, "PASS"},
		{"queue abandonment: a 202 repeated to a queued buyer is unclear, not a second order", "queue", func() RunStats {
			st := withOutcome(stats(4, 0), Accepted, 9) // 13 admitting answers, 12 orders (10 live, 2 ended)
			st.Requeued = 1
			return st
		}(), func() auditReport { a := queueAudit(nil)(); a.Ended = 2; return a }, true, true, "PASS"},
		{"queue abandonment: a 202 with no order", "queue", withOutcome(stats(4, 0), Accepted, 9),
			func() auditReport { a := queueAudit(nil)(); a.Ended = 2; return a }, true, false,
			"13 buyers answered 201 or 202 but only 12 orders"},
		{"queue: no queue figures", "queue", withOutcome(stats(4, 0), Accepted, 6), clean, true, false, "no queue figures"},
		{"queue: dead-lettered", "queue", withOutcome(stats(4, 0), Accepted, 6), queueAudit(func(q *api.QueueAudit) {
			q.Dead, q.Agrees = 1, false
		}), true, false, "1 purchases dead-lettered"},
		{"PostgreSQL read: buyer by buyer", "dlock", stats(10, 0), func() auditReport {
			a := clean()
			a.Buyers = &buyersAudit{Buyers: 40, Orders: 10, Untrue: 9, Problems: []string{"user 3 was answered 201 (order 99) but has no order in PostgreSQL"}}
			return a
		}, true, false, "answers against PostgreSQL: user 3 was answered 201 (order 99) but has no order in PostgreSQL | answers against PostgreSQL: 8 more buyers"},
		{"PostgreSQL read: the buyers agree, the counts are not asked", "dlock", stats(10, 0), func() auditReport {
			a := clean()
			a.Buyers = &buyersAudit{Buyers: 40, Orders: 10}
			return a
		}, true, true, "PASS"},
		{"a 201 without an order", "dlock", stats(11, 0), clean, true, false, "11 buyers answered 201 or 202 but only 10 orders"},
		{"an order without a 201", "dlock", stats(9, 0), clean, true, false, "10 orders exist but only 9"},
		{"an order whose answer timed out", "dlock", stats(9, 1), clean, true, true, "PASS"},
		{"an order whose outcome the API did not know", "dlock", withOutcome(stats(9, 0), OutcomeUnknown, 1), clean, true, true, "PASS"},
		{"unavailable is a clear answer: nothing written", "dlock", withOutcome(stats(9, 0), Unavailable, 1), clean, true, false, "10 orders exist but only 9"},
		{"audit failed", "dlock", stats(10, 0), func() auditReport {
			a := clean()
			a.API, a.Errors = nil, []string{"audit product 1: connection refused"}
			return a
		}, true, false, "audit failed"},
		{"naive oversold", "naive", stats(15, 0), oversold, true, true, "OVERSOLD (expected)"},
		{"naive did not oversell", "naive", stats(10, 0), clean, true, false, "naive did not oversell"},
		{"naive not expected to oversell", "naive", stats(10, 0), clean, false, true, "no oversell"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judge(tt.strategy, tt.st, tt.audit(), tt.expect)
			if v.OK != tt.wantOK {
				t.Fatalf("ok = %v, want %v: %+v", v.OK, tt.wantOK, v)
			}
			if got := v.Label + " | " + strings.Join(v.Problems, " | "); !strings.Contains(got, tt.want) {
				t.Errorf("verdict %q lacks %q", got, tt.want)
			}
			if !v.OK && v.Label != "FAIL" {
				t.Errorf("failed verdict labelled %q", v.Label)
			}
		})
	}
}

func TestPrintTable(t *testing.T) {
	t.Parallel()
	rep := Report{
		Command:  "compare",
		Scenario: Scenario{Stock: 100, ThinkMS: 0, Workers: 64, Targets: []string{"a", "b", "c"}},
		Rounds:   [][]RunReport{{}, {}},
		Summary: []SummaryRow{
			{Name: "dlock", OrdersPerSec: 769, RejectionsPerSec: 9000, P50: 3.2, P99: 45.6, P99Bought: 120, Bought: 100, SoldOut: 5000, OK: true, Verdict: "PASS"},
			{Name: "naive", OrdersPerSec: 900, P50: 80, P99: 1200, P99Bought: 1300, Bought: 400, Oversold: 300, OK: true, Verdict: "OVERSOLD (expected)"},
			{Name: "queue", OrdersPerSec: 500, P50: 4, P99: 20, P99Bought: 25, Bought: 40, Accepted: 60, OK: true, Verdict: "PASS"},
			{Name: SoldOutRowName, RejectionsPerSec: 9000, P50: 2.5, P99: 9, SoldOut: 20000, OK: true, Verdict: "PASS"},
			{Name: GinBaselineName, RejectionsPerSec: 12000, P50: 2, P99: 8, SoldOut: 24000, OK: true, Verdict: "-"},
		},
	}
	var b bytes.Buffer
	PrintTable(&b, rep)
	out := b.String()
	lines := strings.Split(out, "\n")
	header := lines[1]
	for _, col := range []string{"strategy", "orders/s", "vs bound", "rej/s", "p50", "p99", "p99 corr", "p99 buy", "bought", "accepted", "sold_out",
		"already", "busy", "oversold", "dupes", "errors", "verdict"} {
		if !strings.Contains(header, col) {
			t.Errorf("header lacks %q: %s", col, header)
		}
	}
	for _, want := range []string{
		"medians of 2 runs",
		"dlock               769       50%       9000   3.20ms  45.6ms  -         120.0ms  100     0         5000",
		"naive               900       59%       -      80.0ms  1.20s   -         1.30s    400     0         0         0        0     0.0%  300",
		"queue               500       32%       -      4.00ms  20.0ms  -         25.0ms   40      60        0         0        0     0.0%  0",
		"sold out (stock 0)  -         -         9000",
		"against 1538 orders/s",
		"the API answers 9000 req/s, 75% of a bare gin handler's 12000 req/s",
		"PASS: no safe strategy oversold",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for i, l := range lines {
		if strings.HasSuffix(l, " ") {
			t.Errorf("line %d has trailing spaces: %q", i, l)
		}
	}
}

func TestSummarizeRoundsMediansAndWorst(t *testing.T) {
	t.Parallel()
	run := func(ordersPerSec float64, oversold int64, ok bool) RunReport {
		r := RunReport{Name: "dlock", Strategy: "dlock", Verdict: verdict{OK: ok, Label: "PASS"}}
		if !ok {
			r.Verdict.Label = "FAIL"
		}
		r.Stats.OrdersPerSec = ordersPerSec
		r.Audit = &auditReport{Direct: &audit.Sale{Oversold: oversold}}
		return r
	}
	rows := summarizeRounds([][]RunReport{{run(100, 0, true)}, {run(300, 2, false)}, {run(200, 0, true)}})
	if len(rows) != 1 {
		t.Fatalf("%d rows, want 1", len(rows))
	}
	r := rows[0]
	if r.OrdersPerSec != 200 || r.Oversold != 2 || r.OK || r.Verdict != "FAIL" || r.Runs != 3 {
		t.Fatalf("row = %+v, want median 200 orders/s, worst oversold 2, FAIL over 3 runs", r)
	}
}

func TestProgressLine(t *testing.T) {
	t.Parallel()
	var c Counts
	c[Bought], c[SoldOut], c[AlreadyPurchased], c[Busy], c[RateLimited], c[ServerError] = 10, 200, 3, 4, 1, 2
	got := progressLine("redis", 2500*1e6, c, "0")
	want := "[redis]   2.5s  req 220  bought 10  sold_out 200  already 3  busy 5  errors 2  stock 0"
	if got != want {
		t.Fatalf("progress line\n got %q\nwant %q", got, want)
	}
}
