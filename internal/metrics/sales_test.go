package metrics_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

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
