package loadgen

import "fmt"

// verdict is the judgement of one run.
type verdict struct {
	OK       bool     `json:"ok"`
	Label    string   `json:"label"`
	Problems []string `json:"problems,omitempty"`
}

// judge decides whether a run kept the promise. A safe strategy must not oversell, sell a
// user twice or leave an inconsistent audit; every strategy's answers must agree with
// PostgreSQL's orders buyer by buyer (a.Buyers, buyers.go), or, with the API's audit alone,
// in count: one order per buyer admitted (201, or 202 once the queue drained); the queue
// strategy must have Redis agree with PostgreSQL and nothing dead-lettered; naive, when
// expectNaive, must oversell (else the scenario proves nothing).
func judge(strategy string, st RunStats, a auditReport, expectNaive bool) verdict {
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for _, e := range a.Errors {
		bad("audit failed: %s", e)
	}
	orders, oversold := int64(-1), int64(0)
	if x := a.API; x != nil {
		orders, oversold = int64(x.Orders), int64(x.Oversold)
		if IsSafe(strategy) {
			unsafe(bad, "API audit", int64(x.Oversold), int64(x.DuplicateUsers), x.Consistent,
				int64(x.Orders), int64(x.InitialStock), int64(x.Stock))
			if strategy == "redis" && (x.Redis == nil || !x.Redis.Agrees) {
				bad("API audit: Redis gate and PostgreSQL disagree")
			}
			if strategy == QueueStrategy {
				switch q := x.Queue; {
				case q == nil:
					bad("API audit: no queue figures for a queue product")
				case !q.Agrees:
					bad("API audit: Redis queue (stock %d seeded=%v, buyers %d, queued %d, dead %d) and PostgreSQL disagree",
						q.Stock, q.Seeded, q.Buyers, q.Queued, q.Dead)
				}
				if q := x.Queue; q != nil && q.Dead > 0 {
					bad("API audit: %d purchases dead-lettered", q.Dead)
				}
			}
		}
	}
	if s := a.Direct; s != nil {
		if x := a.API; x != nil && (s.Orders != int64(x.Orders) || s.Stock != int64(x.Stock) || s.InitialStock != int64(x.InitialStock)) {
			bad("API audit (orders %d, stock %d) and PostgreSQL (orders %d, stock %d) disagree", x.Orders, x.Stock, s.Orders, s.Stock)
		}
		orders, oversold = s.Orders, max(oversold, s.Oversold)
		if IsSafe(strategy) {
			source := "direct audit (PostgreSQL)"
			if g := s.Gate; g != nil {
				source = "direct audit (PostgreSQL and the Redis gate)"
				if !g.Agrees {
					bad("Redis gate (stock %d seeded=%v, buyers %d, pending %d) disagrees with PostgreSQL (stock %d, orders %d)",
						g.Stock, g.Seeded, g.Buyers, g.Pending, s.Stock, s.Orders)
				}
			}
			if q := s.Queue; q != nil {
				source = "direct audit (PostgreSQL and the Redis queue)"
				if !q.Agrees {
					bad("Redis queue (stock %d seeded=%v, buyers %d, queued %d, dead %d) disagrees with PostgreSQL (stock %d, orders %d)",
						q.Stock, q.Seeded, q.Buyers, q.Queued, q.Dead, s.Stock, s.Orders)
				}
				if q.Dead > 0 {
					bad("direct audit: %d purchases dead-lettered", q.Dead)
				}
			}
			unsafe(bad, source, s.Oversold, s.DuplicateUsers, s.Consistent, s.Orders, s.InitialStock, s.Stock)
		}
	}
	if b := a.Buyers; b != nil {
		for _, p := range b.Problems {
			bad("answers against PostgreSQL: %s", p)
		}
		if n := b.Untrue - len(b.Problems); n > 0 {
			bad("answers against PostgreSQL: %d more buyers", n)
		}
	} else if orders >= 0 { // the API's audit alone: counts, not buyers
		orders -= a.OrdersBefore // an existing product's earlier orders (-product) are not the run's
		admitted, unclear := st.Buyers(), st.Outcomes.Unclear()
		if a.Ended > 0 { // an abandonment sale: a buyer whose reservation ended may buy again
			// A 202 repeated to a queued buyer may be the same purchase or a new one.
			orders, admitted, unclear = orders+a.Ended, st.Outcomes.Admitted()-st.Requeued, unclear+st.Requeued
		}
		switch {
		case admitted > orders:
			bad("%d buyers answered 201 or 202 but only %d orders exist", admitted, orders)
		case orders > admitted+unclear:
			bad("%d orders exist but only %d buyers answered 201 or 202 (and %d had no clear answer)", orders, admitted, unclear)
		}
	}
	v := verdict{Problems: problems}
	switch {
	case !IsSafe(strategy) && expectNaive && oversold == 0:
		v.Problems = append(v.Problems, "naive did not oversell: the scenario proves nothing (raise -think-ms or -workers)")
	case !IsSafe(strategy) && oversold > 0:
		v.Label = "OVERSOLD (expected)"
	case !IsSafe(strategy):
		v.Label = "no oversell"
	}
	v.OK = len(v.Problems) == 0
	if !v.OK {
		v.Label = "FAIL"
	} else if v.Label == "" {
		v.Label = "PASS"
	}
	return v
}

// unsafe reports, through bad, what one audit source (the API's or the direct one) shows that
// a safe strategy must never do: oversell, sell a user twice, or leave orders and stock apart.
func unsafe(bad func(string, ...any), source string, oversold, dupes int64, consistent bool, orders, initial, stock int64) {
	if oversold > 0 {
		bad("%s: oversold %d", source, oversold)
	}
	if dupes > 0 {
		bad("%s: %d users bought twice", source, dupes)
	}
	if !consistent {
		bad("%s: inconsistent (orders %d, initial %d, stock %d)", source, orders, initial, stock)
	}
}
