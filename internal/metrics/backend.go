package metrics

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// backendMetrics are the shared backends' health as this process's background checker sees
// it (internal/health): seckill_backend_up{backend} and
// seckill_backend_check_duration_seconds{backend}, each series born at its backend's first
// check.
type backendMetrics struct {
	up   *prometheus.GaugeVec
	took *prometheus.GaugeVec
}

func newBackendMetrics(reg prometheus.Registerer) *backendMetrics {
	b := &backendMetrics{
		up: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "seckill_backend_up",
			Help: "1 when the backend (postgres, redis, redlock, etcd) answered this process's last check, 0 when it did not.",
		}, []string{"backend"}),
		took: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "seckill_backend_check_duration_seconds",
			Help: "How long this process's last check of the backend took (its bound, 2 s, when it hung).",
		}, []string{"backend"}),
	}
	reg.MustRegister(b.up, b.took)
	return b
}

// BackendChecked implements health.Observer.
func (m *Metrics) BackendChecked(backend string, up bool, took time.Duration) {
	v := 0.0
	if up {
		v = 1
	}
	m.backends.up.WithLabelValues(backend).Set(v)
	m.backends.took.WithLabelValues(backend).Set(took.Seconds())
}

// LoggedHandler is Handler logging its gathering and writing errors to log as JSON lines
// (promhttp logs none).
func (m *Metrics) LoggedHandler(log *slog.Logger) http.Handler {
	return m.scrapeBound(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: promLogger{log}}))
}

// promLogger is promhttp.Logger on slog.
type promLogger struct{ log *slog.Logger }

func (l promLogger) Println(v ...any) {
	l.log.Warn("metrics exporter", "err", fmtln(v...))
}

func fmtln(v ...any) string {
	s := fmt.Sprintln(v...)
	return strings.TrimSuffix(s, "\n")
}
