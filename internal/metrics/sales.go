package metrics

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/inventory"
)

// Bounds of what a scrape reads of the sales (WatchSales).
const (
	// saleProducts is how many of the newest products a scrape looks at.
	saleProducts = 200
	// saleWindow: of those, the ones created or sold within it are reported.
	saleWindow = time.Hour
	// saleTimeout bounds a scrape's reads: an outage leaves the series out, never the scrape
	// hanging. A scraper that says its own timeout bounds them to half of it (scrapeBound).
	saleTimeout = 2 * time.Second
)

// scrapeTimeoutHeader is the header in which Prometheus sends its scrape timeout, in seconds.
const scrapeTimeoutHeader = "X-Prometheus-Scrape-Timeout-Seconds"

// scrapeBound wraps a /metrics handler: a scrape that says its timeout (scrapeTimeoutHeader)
// bounds the reads of this and later scrapes to half of it, if under saleTimeout, so that a
// backend that hangs leaves its series out and never makes the scrape fail: a replica whose
// scrape times out looks down (up == 0), and its seckill_backend_up, which says which
// backend hangs, is lost with it.
func (m *Metrics) scrapeBound(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s, err := strconv.ParseFloat(r.Header.Get(scrapeTimeoutHeader), 64); err == nil && s > 0 {
			m.readBound.Store(int64(min(saleTimeout, time.Duration(s*float64(time.Second)/2))))
		}
		h.ServeHTTP(w, r)
	})
}

var (
	stockDesc = prometheus.NewDesc("seckill_product_stock",
		"Units left in PostgreSQL, read at scrape time, of each of the newest products created or sold within the last hour (the same on every replica: aggregate with max).",
		[]string{"product_id"}, nil)
	backlogDesc = prometheus.NewDesc("seckill_queue_backlog",
		"Purchases admitted and not yet written, read at scrape time, of each queue product with purchases queued within the last minute or still pending (the same on every replica: aggregate with max).",
		[]string{"product_id"}, nil)
	drainedDesc = prometheus.NewDesc("seckill_queue_drained_total",
		"Purchases that left the stream of each queue product listed by seckill_queue_backlog, read at scrape time: written to PostgreSQL, or dead-lettered (Redis's entries-added less the stream's length; the same on every replica: aggregate with max).",
		[]string{"product_id"}, nil)
	deadDesc = prometheus.NewDesc("seckill_queue_dead_letters",
		"Entries in the dead-letter stream of each queue product listed by seckill_queue_backlog, read at scrape time.",
		[]string{"product_id"}, nil)
)

// WatchSales adds, read at each scrape, seckill_product_stock from PostgreSQL and the queue
// strategy's series from Redis under keys; a read that fails or is slow leaves its series out
// (docs/api.md). Call it once, before serving.
func (m *Metrics) WatchSales(keys inventory.Keys) {
	m.reg.MustRegister(&salesCollector{m: m, keys: keys})
}

type salesCollector struct {
	m    *Metrics
	keys inventory.Keys
}

func (s *salesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- stockDesc
	ch <- backlogDesc
	ch <- drainedDesc
	ch <- deadDesc
}

func (s *salesCollector) Collect(ch chan<- prometheus.Metric) {
	bound := saleTimeout
	if b := time.Duration(s.m.readBound.Load()); b > 0 {
		bound = b
	}
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	if s.m.db != nil {
		s.collectStock(ctx, ch)
	}
	if s.m.rdb != nil {
		s.collectQueues(ctx, ch)
	}
}

func (s *salesCollector) collectStock(ctx context.Context, ch chan<- prometheus.Metric) {
	var rows []struct{ ID, Stock int64 }
	err := s.m.db.WithContext(ctx).Raw(`SELECT id, stock FROM (
		SELECT id, stock, updated_at FROM products ORDER BY id DESC LIMIT ?) newest
		WHERE updated_at > now() - make_interval(secs => ?)`, saleProducts, saleWindow.Seconds()).Scan(&rows).Error
	if err != nil {
		return
	}
	for _, r := range rows {
		ch <- prometheus.MustNewConstMetric(stockDesc, prometheus.GaugeValue, float64(r.Stock), strconv.FormatInt(r.ID, 10))
	}
}

func (s *salesCollector) collectQueues(ctx context.Context, ch chan<- prometheus.Metric) {
	members, err := s.m.rdb.ZRange(ctx, s.keys.QueueActive(), 0, saleProducts-1).Result()
	if err != nil || len(members) == 0 {
		return
	}
	pipe := s.m.rdb.Pipeline()
	ids := make([]int64, 0, len(members))
	var queued, dead []*redis.IntCmd
	var infos []*redis.XInfoStreamCmd
	for _, mb := range members {
		id, err := strconv.ParseInt(mb, 10, 64)
		if err != nil {
			continue
		}
		ids = append(ids, id)
		queued = append(queued, pipe.XLen(ctx, s.keys.QueueStream(id)))
		dead = append(dead, pipe.XLen(ctx, s.keys.QueueDead(id)))
		infos = append(infos, pipe.XInfoStream(ctx, s.keys.QueueStream(id)))
	}
	// XINFO STREAM fails for a stream not made yet: that product has no drained series.
	_, _ = pipe.Exec(ctx)
	for i, id := range ids {
		if queued[i].Err() != nil || dead[i].Err() != nil {
			continue
		}
		label := strconv.FormatInt(id, 10)
		ch <- prometheus.MustNewConstMetric(backlogDesc, prometheus.GaugeValue, float64(queued[i].Val()), label)
		ch <- prometheus.MustNewConstMetric(deadDesc, prometheus.GaugeValue, float64(dead[i].Val()), label)
		// Redis before 7.0 reports no entries-added (0): no drained series then.
		if info, err := infos[i].Result(); err == nil && info.EntriesAdded >= info.Length && info.EntriesAdded > 0 {
			ch <- prometheus.MustNewConstMetric(drainedDesc, prometheus.CounterValue, float64(info.EntriesAdded-info.Length), label)
		}
	}
}
