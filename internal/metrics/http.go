package metrics

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// UnmatchedRoute is the route label of the requests no route matched (404 not_found, 405
// method_not_allowed): the raw path never becomes a label, so the label set stays bounded
// whatever clients ask for.
const UnmatchedRoute = "unmatched"

// httpMetrics are seckill_http_requests_total{route,method,code} and
// seckill_http_request_duration_seconds{route,method}. Request resolves each label set's
// collectors once and keeps them, so that a request costs two atomic loads, a map read and
// the collectors' own atomics: no allocation, no lock.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec

	mu     sync.Mutex                                   // serializes writers of routes
	routes atomic.Pointer[map[routeKey]*routeCollector] // copied on write: routes are few
}

type routeKey struct{ route, method string }

// routeCollector holds one route and method's histogram and its counters by status code.
type routeCollector struct {
	key      routeKey
	duration prometheus.Observer
	codes    [500]atomic.Pointer[prometheus.Counter] // status 100 to 599, made on first use
}

func newHTTPMetrics() *httpMetrics {
	h := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "seckill_http_requests_total",
			Help: "HTTP requests answered, by route template (" + UnmatchedRoute + " when none matched), method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "seckill_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, from the router to the last handler, by route template and method.",
			Buckets: buckets,
		}, []string{"route", "method"}),
	}
	h.routes.Store(&map[routeKey]*routeCollector{})
	return h
}

// Request implements httpapi.RequestObserver: route is gin's route template (c.FullPath()),
// empty when no route matched. A method other than the standard ones is counted as "other".
// It is safe for concurrent use.
func (m *Metrics) Request(route, method string, code int, took time.Duration) {
	rc := m.http.route(route, method)
	rc.duration.Observe(took.Seconds())
	if code < 100 || code > 599 {
		m.http.requests.WithLabelValues(rc.key.route, rc.key.method, strconv.Itoa(code)).Inc()
		return
	}
	slot := &rc.codes[code-100]
	c := slot.Load()
	if c == nil {
		counter := m.http.requests.WithLabelValues(rc.key.route, rc.key.method, strconv.Itoa(code))
		slot.CompareAndSwap(nil, &counter)
		c = slot.Load()
	}
	(*c).Inc()
}

// route returns the collectors of route and method, made on first use.
func (h *httpMetrics) route(route, method string) *routeCollector {
	if rc, ok := (*h.routes.Load())[routeKey{route, method}]; ok {
		return rc
	}
	key := routeKey{route, methodLabel(method)}
	if key.route == "" {
		key.route = UnmatchedRoute
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	old := *h.routes.Load()
	if rc, ok := old[key]; ok { // another name for a label set made already ("FOO" and "BAR": "other")
		return rc
	}
	rc := &routeCollector{key: key, duration: h.duration.WithLabelValues(key.route, key.method)}
	next := make(map[routeKey]*routeCollector, len(old)+2)
	for k, v := range old {
		next[k] = v
	}
	next[key] = rc
	if raw := (routeKey{route, method}); raw != key && len(old) < maxRawKeys {
		next[raw] = rc // found at once next time; bounded, as a client picks the method
	}
	h.routes.Store(&next)
	return rc
}

// maxRawKeys bounds the label sets kept under the route and method as received.
const maxRawKeys = 256

// methodLabel is method when it is one of HTTP's standard methods, else "other".
func methodLabel(method string) string {
	switch method {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE":
		return method
	}
	return "other"
}
