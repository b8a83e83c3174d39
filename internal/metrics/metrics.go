// Package metrics exposes seckill's Prometheus metrics. It implements the observer hooks
// of internal/order, internal/dlock and of internal/httpapi (its rate limiter and its
// per-route request metrics), so those packages stay free of Prometheus, reads the stock and
// queue backlog of the products on sale at each scrape (WatchSales), and exports the build it
// is given as seckill_build_info.
package metrics

import (
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/buildinfo"
	"github.com/seckill/seckill/internal/inventory"
)

// Metrics holds every collector on its own registry. It is safe for concurrent use.
type Metrics struct {
	reg        *prometheus.Registry
	purchases  *prometheus.CounterVec
	purchaseD  *prometheus.HistogramVec
	lockWait   *prometheus.HistogramVec
	lockHold   prometheus.Histogram
	contended  prometheus.Counter
	renewals   *prometheus.CounterVec
	lost       prometheus.Counter
	releaseErr prometheus.Counter
	batchSize  prometheus.Histogram
	settled    *prometheus.CounterVec
	reconciled *prometheus.CounterVec
	returned   *prometheus.CounterVec
	shed       *prometheus.CounterVec
	raised     prometheus.Counter
	dead       *prometheus.CounterVec
	controls   *prometheus.CounterVec // see controls.go
	restocked  prometheus.Counter
	limited    *prometheus.CounterVec
	limiterErr *prometheus.CounterVec
	http       *httpMetrics
	backends   *backendMetrics
	skew       clockSkew
	db         *gorm.DB              // nil: no product stock (WatchSales)
	rdb        redis.UniversalClient // nil: no queue backlog (WatchSales)
	readBound  atomic.Int64          // bound of a scrape's reads (ns; 0: saleTimeout), see scrapeBound
}

// buckets are the latency buckets, in seconds: from 100µs, with a bound at 0.25, the purchase
// latency objective (docs/running-a-sale.md#the-slos), and past 45, above the longest a
// purchase can take (WRITE_TIMEOUT, 40 s at most), so that no answer lands in +Inf alone.
var buckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
	0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 45}

// New registers the collectors, plus Go runtime, process, PostgreSQL pool and Redis pool
// statistics when db and rdb are not nil, and seckill_build_info, a constant 1 labelled with
// build's version, revision and Go version (the caller reads build; see buildinfo.Read).
func New(db *gorm.DB, rdb redis.UniversalClient, build buildinfo.Info) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), http: newHTTPMetrics(), db: db, rdb: rdb}
	m.purchases = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seckill_purchases_total", Help: "Purchases by strategy and outcome.",
	}, []string{"strategy", "outcome"})
	m.purchaseD = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "seckill_purchase_duration_seconds", Help: "Time to serve a purchase, by strategy and outcome.", Buckets: buckets,
	}, []string{"strategy", "outcome"})
	m.lockWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "seckill_lock_wait_seconds", Help: "Time to obtain a product lock, including local queueing, by result.", Buckets: buckets,
	}, []string{"result"})
	m.lockHold = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "seckill_lock_hold_seconds", Help: "Time a product lock was held.", Buckets: buckets,
	})
	m.contended = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "seckill_lock_contended_total", Help: "Lock attempts that found the key held by someone else.",
	})
	m.renewals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seckill_lock_renewals_total", Help: "Watchdog renewals by result.",
	}, []string{"result"})
	m.lost = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "seckill_lock_lost_total", Help: "Locks the watchdog found lost while held.",
	})
	m.releaseErr = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "seckill_lock_release_errors_total", Help: "Releases that failed (the key then expires on its own).",
	})
	m.batchSize = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "seckill_batch_size", Help: "Buyers written in one transaction by one batch (dlock, redis and queue strategies).",
		Buckets: prometheus.ExponentialBuckets(1, 2, 9),
	})
	m.limited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seckill_rate_limited_total", Help: "Purchase attempts refused 429 by a rate limit, by scope (user, addr).",
	}, []string{"scope"})
	m.limiterErr = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seckill_rate_limiter_errors_total", Help: "Rate-limit checks Redis did not answer, let through (fail open), by scope.",
	}, []string{"scope"})
	m.settled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seckill_commits_settled_total",
		Help: "COMMITs that got no answer, by what PostgreSQL said of them afterwards (committed, rolled_back, unknown).",
	}, []string{"result"})
	m.reconciled = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seckill_gate_reconciled_total",
		Help: "Expired redis-gate admissions settled with PostgreSQL, by result (confirmed, given_back).",
	}, []string{"result"})
	m.returned = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seckill_reservation_returns_total",
		Help: "Units of ended reservations given back to stock in PostgreSQL by this process, by reason (expired, cancelled).",
	}, []string{"reason"})
	m.shed = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seckill_purchases_shed_total",
		Help: "Purchases answered 503 busy at once because their product's purchases had stood in line for a database connection (the controlled delay), by strategy.",
	}, []string{"strategy"})
	m.raised = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "seckill_lock_fences_raised_total",
		Help: "Product locks whose fence was raised above the one the product held after the product refused it: the lock's Redis had lost fences it gave out (a restart from older data, a failover, a clock set right).",
	})
	m.dead = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "seckill_queue_dead_lettered_total",
		Help: "Queued purchases moved to the dead-letter stream, by reason (sold_out, failed).",
	}, []string{"reason"})
	m.reg.MustRegister(m.purchases, m.purchaseD, m.lockWait, m.lockHold, m.contended, m.renewals, m.lost, m.releaseErr, m.batchSize,
		m.limited, m.limiterErr, m.settled, m.reconciled, m.returned, m.shed, m.raised, m.dead, m.http.requests, m.http.duration,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildCollector(build))
	m.backends = newBackendMetrics(m.reg)
	m.registerControls()
	m.initLabels()
	if db != nil {
		if pool, err := db.DB(); err == nil { // gorm's pool itself, for its statistics only
			m.reg.MustRegister(collectors.NewDBStatsCollector(pool, "seckill"))
		}
	}
	if rdb != nil {
		m.reg.MustRegister(redisPoolCollector(rdb)...)
	}
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return m.scrapeBound(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
}

// Purchased implements order.Observer.
func (m *Metrics) Purchased(strategy inventory.Strategy, outcome string, took time.Duration) {
	s := string(strategy)
	if s == "" {
		s = "unknown"
	}
	m.purchases.WithLabelValues(s, outcome).Inc()
	m.purchaseD.WithLabelValues(s, outcome).Observe(took.Seconds())
}

// Batch implements order.Observer.
func (m *Metrics) Batch(size int) { m.batchSize.Observe(float64(size)) }

// DeadLettered implements order.Observer.
func (m *Metrics) DeadLettered(reason string, n int) {
	m.dead.WithLabelValues(reason).Add(float64(n))
}

// Shed implements order.Observer.
func (m *Metrics) Shed(strategy inventory.Strategy) { m.shed.WithLabelValues(string(strategy)).Inc() }

// FenceRaised implements order.Observer.
func (m *Metrics) FenceRaised() { m.raised.Inc() }

// Settled implements order.Observer.
func (m *Metrics) Settled(result string) { m.settled.WithLabelValues(result).Inc() }

// Reconciled implements order.Observer.
func (m *Metrics) Reconciled(confirmed, givenBack int) {
	m.reconciled.WithLabelValues("confirmed").Add(float64(confirmed))
	m.reconciled.WithLabelValues("given_back").Add(float64(givenBack))
}

// Returned implements order.Observer.
func (m *Metrics) Returned(reason string, n int) { m.returned.WithLabelValues(reason).Add(float64(n)) }

// RateLimited implements httpapi.LimiterObserver.
func (m *Metrics) RateLimited(scope string) { m.limited.WithLabelValues(scope).Inc() }

// LimiterUnavailable implements httpapi.LimiterObserver.
func (m *Metrics) LimiterUnavailable(scope string) { m.limiterErr.WithLabelValues(scope).Inc() }

// buildCollector is seckill_build_info: the usual Prometheus way to export a build, a gauge
// that is always 1, to join on or to count the versions running.
func buildCollector(b buildinfo.Info) prometheus.Collector {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "seckill_build_info", Help: "Always 1; the labels name the running build (version ends in +dirty when the tree was modified).",
	}, []string{"version", "revision", "go_version"})
	g.WithLabelValues(b.Version, b.Revision, b.GoVersion).Set(1)
	return g
}

func redisPoolCollector(rdb redis.UniversalClient) []prometheus.Collector {
	gauge := func(name, help string, f func(*redis.PoolStats) uint32) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "seckill_redis_pool_" + name, Help: help},
			func() float64 { return float64(f(rdb.PoolStats())) })
	}
	counter := func(name, help string, f func(*redis.PoolStats) uint32) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "seckill_redis_pool_" + name, Help: help},
			func() float64 { return float64(f(rdb.PoolStats())) })
	}
	return []prometheus.Collector{
		gauge("total_conns", "Connections in the Redis pool.", func(s *redis.PoolStats) uint32 { return s.TotalConns }),
		gauge("idle_conns", "Idle connections in the Redis pool.", func(s *redis.PoolStats) uint32 { return s.IdleConns }),
		counter("hits_total", "Times a free connection was found in the pool.", func(s *redis.PoolStats) uint32 { return s.Hits }),
		counter("misses_total", "Times no free connection was found in the pool.", func(s *redis.PoolStats) uint32 { return s.Misses }),
		counter("timeouts_total", "Times a wait for a connection timed out.", func(s *redis.PoolStats) uint32 { return s.Timeouts }),
	}
}
