package metrics

import "github.com/prometheus/client_golang/prometheus"

// AuditMetrics are the metrics of the service's self-audit (internal/app's audit loop). It is
// safe for concurrent use.
type AuditMetrics struct {
	inconsistent prometheus.Gauge
	audited      prometheus.Gauge
	rounds       *prometheus.CounterVec
}

// SelfAudit registers the self-audit's metrics and returns them: seckill_audit_inconsistent_products,
// seckill_audit_products and seckill_audit_rounds_total{result}. Call it once, and only when
// the audit runs: a 0 from an audit that never ran would say that all is well.
func (m *Metrics) SelfAudit() *AuditMetrics {
	a := &AuditMetrics{
		inconsistent: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "seckill_audit_inconsistent_products",
			Help: "Products the last self-audit round found inconsistent: PostgreSQL's stock and live orders do not add up to the initial stock (or stock < 0, an oversell, a user with two orders), or the Redis gate disagrees with PostgreSQL and did so in the round before with the same figures (the same on every replica: aggregate with max).",
		}),
		audited: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "seckill_audit_products",
			Help: "Products the last self-audit round read: those among the newest that were created or sold recently.",
		}),
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seckill_audit_rounds_total",
			Help: "Self-audit rounds, by result: ok, or error (PostgreSQL or Redis could not be read; the gauges keep the last round's figures).",
		}, []string{"result"}),
	}
	a.rounds.WithLabelValues("ok")
	a.rounds.WithLabelValues("error")
	m.reg.MustRegister(a.inconsistent, a.audited, a.rounds)
	return a
}

// Round records a self-audit round that read audited products and found inconsistent of them
// inconsistent.
func (a *AuditMetrics) Round(audited, inconsistent int) {
	a.audited.Set(float64(audited))
	a.inconsistent.Set(float64(inconsistent))
	a.rounds.WithLabelValues("ok").Inc()
}

// Failed records a self-audit round that could not read what it audits.
func (a *AuditMetrics) Failed() { a.rounds.WithLabelValues("error").Inc() }
