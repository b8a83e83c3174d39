package metrics

import "github.com/seckill/seckill/internal/inventory"

// The label values each labelled counter is known to take. initLabels exports every series
// they make at 0 from the start, as the Prometheus client libraries advise: a series that
// appears only at its first increment hides that increment from rate() and increase(), so
// an alert on the first event of its kind would never fire
// (docs/running-a-sale.md#the-alerts).
var (
	// PurchaseStrategies are the strategy labels of seckill_purchases_total: the production
	// strategies, "bundle" (bundle purchases) and "unknown" (a product that could not be
	// read). A strategy plugged in from outside (the lab build's) gets its series at its first
	// purchase.
	PurchaseStrategies = append(append([]string{}, strategyNames()...), "bundle", "unknown")
	// PurchaseOutcomes are the outcome labels of seckill_purchases_total: what order.Outcome
	// returns.
	PurchaseOutcomes = []string{"bought", "accepted", "sold_out", "sale_not_started", "sale_ended", "sale_paused", "not_your_turn", "place_expired", "already_purchased", "busy", "not_found",
		"unavailable", "outcome_unknown", "canceled", "error"}
	// SettleResults are the result labels of seckill_commits_settled_total.
	SettleResults = []string{"committed", "rolled_back", "unknown"}
	// DeadLetterReasons are the reason labels of seckill_queue_dead_lettered_total.
	DeadLetterReasons = []string{"sold_out", "failed"}
	// ReturnReasons are the reason labels of seckill_reservation_returns_total: the status
	// ended reservations take.
	ReturnReasons = []string{"expired", "cancelled"}
	// LimiterScopes are the scope labels of the rate limiter's counters.
	LimiterScopes = []string{"user", "addr"}
)

func strategyNames() []string {
	out := make([]string, len(inventory.Strategies))
	for i, s := range inventory.Strategies {
		out[i] = string(s)
	}
	return out
}

// initLabels makes every known series of the labelled counters, at 0.
func (m *Metrics) initLabels() {
	for _, s := range PurchaseStrategies {
		for _, o := range PurchaseOutcomes {
			m.purchases.WithLabelValues(s, o)
		}
		if s != "unknown" {
			m.shed.WithLabelValues(s)
		}
	}
	for _, r := range SettleResults {
		m.settled.WithLabelValues(r)
	}
	for _, r := range DeadLetterReasons {
		m.dead.WithLabelValues(r)
	}
	for _, r := range ReturnReasons {
		m.returned.WithLabelValues(r)
	}
	for _, s := range LimiterScopes {
		m.limited.WithLabelValues(s)
		m.limiterErr.WithLabelValues(s)
	}
	for _, r := range []string{"confirmed", "given_back"} {
		m.reconciled.WithLabelValues(r)
	}
	for _, r := range []string{"ok", "error"} {
		m.renewals.WithLabelValues(r)
	}
}
