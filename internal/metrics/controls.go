package metrics

import "github.com/prometheus/client_golang/prometheus"

// ControlActions are the action labels of seckill_sale_controls_total: order's Control* names.
var ControlActions = []string{"pause", "resume", "end", "restock", "restock_replay"}

// registerControls registers seckill_sale_controls_total and seckill_restocked_units_total,
// every action's series at 0.
func (m *Metrics) registerControls() {
	m.controls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seckill_sale_controls_total",
		Help: "The merchant's controls this process carried out, by action (pause, resume, end, restock, restock_replay: a restock's key sent again, nothing added).",
	}, []string{"action"})
	m.restocked = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "seckill_restocked_units_total", Help: "Units restocks added to stock through this process.",
	})
	m.reg.MustRegister(m.controls, m.restocked)
	for _, a := range ControlActions {
		m.controls.WithLabelValues(a)
	}
}

// Controlled implements order.ControlObserver.
func (m *Metrics) Controlled(action string, units int) {
	m.controls.WithLabelValues(action).Inc()
	m.restocked.Add(float64(units))
}
