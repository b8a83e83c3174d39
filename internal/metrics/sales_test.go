package metrics_test

import (
	"context"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/buildinfo"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/metrics"
	"github.com/seckill/seckill/internal/testenv"
)

// TestQueueDrained: a queue product's stream is read at scrape time into its backlog (what
// is in the stream) and its drained counter (what left it), so that an alert can tell a
// stream being written from one that is stuck.
func TestQueueDrained(t *testing.T) {
	t.Parallel()
	rdb, prefix := testenv.Redis(t)
	ctx := context.Background()
	keys := inventory.Keys{Prefix: prefix}
	if err := rdb.ZAdd(ctx, keys.QueueActive(), redis.Z{Score: 1, Member: "7"}, redis.Z{Score: 1, Member: "8"}).Err(); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 5 {
		id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: keys.QueueStream(7), Values: []any{"u", "1"}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rdb.XDel(ctx, keys.QueueStream(7), ids[:3]...).Err(); err != nil {
		t.Fatal(err)
	}
	m := metrics.New(nil, rdb, buildinfo.Info{})
	m.WatchSales(keys)
	body := scrape(t, m)
	for _, want := range []string{
		`seckill_queue_backlog{product_id="7"} 2`,
		`seckill_queue_drained_total{product_id="7"} 3`,
		`seckill_queue_backlog{product_id="8"} 0`, // no stream yet: no drained series
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, `seckill_queue_drained_total{product_id="8"}`) {
		t.Errorf("/metrics has a drained series for a product with no stream")
	}
}

// TestScrapeBoundByItsTimeout: with a PostgreSQL that accepts connections and never answers,
// a scrape that says its timeout (Prometheus's X-Prometheus-Scrape-Timeout-Seconds: 0.4)
// answers within it, the stock left out; a scrape that says nothing (the control) waits
// the 2 s bound of its reads.
func TestScrapeBoundByItsTimeout(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer func() { ln.Close(); <-done }()
	go func() {
		defer close(done)
		var held []net.Conn // never answered
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	gdb, err := db.Open("postgres://u:p@"+ln.Addr().String()+"/db?sslmode=disable", db.PoolOptions{MaxOpen: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if pool, err := gdb.DB(); err == nil {
			pool.Close()
		}
	}()
	m := metrics.New(gdb, nil, buildinfo.Info{})
	m.WatchSales(inventory.Keys{})
	for _, tc := range []struct {
		header   string
		min, max time.Duration
	}{{"", 1900 * time.Millisecond, 5 * time.Second}, {"0.4", 0, 400 * time.Millisecond}} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if tc.header != "" {
			req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", tc.header)
		}
		rec := httptest.NewRecorder()
		start := time.Now()
		m.Handler().ServeHTTP(rec, req)
		took := time.Since(start)
		if rec.Code != 200 || took < tc.min || took > tc.max || strings.Contains(rec.Body.String(), "seckill_product_stock{") {
			t.Errorf("scrape with timeout %q: %d in %v: want 200 without stock in [%v, %v]", tc.header, rec.Code, took, tc.min, tc.max)
		}
	}
}
