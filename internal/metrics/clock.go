package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// clockSkew is seckill_clock_skew_seconds, registered at the process's first measurement so
// that no 0 is exported before one.
type clockSkew struct {
	once  sync.Once
	gauge prometheus.Gauge
}

// ClockSkew records the last skew measured between PostgreSQL's clock and this process's
// (positive: PostgreSQL ahead).
func (m *Metrics) ClockSkew(skew time.Duration) {
	m.skew.once.Do(func() {
		m.skew.gauge = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "seckill_clock_skew_seconds",
			Help: "How far PostgreSQL's clock was ahead of this process's at the last check (negative: behind), half the round trip corrected.",
		})
		m.reg.MustRegister(m.skew.gauge)
	})
	m.skew.gauge.Set(skew.Seconds())
}
