package labrun_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/labrun"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/missing"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestPartitionCells runs the partition column's telling cells as `loadtest lab` does, with
// the three API processes in network namespaces of their own: the holder of a product's lock
// is cut off from the lock's server (not from PostgreSQL) as it starts its work, longer than
// its lease, then healed. The watchdog lock's holder is never told of its loss and writes
// late: oversold, by the network alone. setnx never expires: the cut-off holder's release is
// lost, and the sale stalls. dlock's holder learns of its loss when its lease runs out and
// stops, and its fence would refuse a late write: safe; so is etcd's, cut off from etcd. The
// advisory lock's holder, cut off from PostgreSQL itself, loses its session (PostgreSQL's
// keepalives end it) while it works, and writes once healed: postgres-nofence oversells, and
// postgres's fence refuses the write. It is skipped with -short, without root, ip or nft, and
// without ETCD_ENDPOINTS.
func TestPartitionCells(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three API processes in network namespaces; skipped with -short")
	}
	if err := labrun.PartitionSupported(); err != nil {
		missing.Skip(t, err.Error())
	}
	endpoints := strings.Join(testenv.EtcdEndpoints(t), ",")
	dsn := testenv.Schema(t)
	rdb, prefix := testenv.Redis(t)
	gdb, err := db.Open(dsn, db.PoolOptions{MaxOpen: 4})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := gdb.DB()
	t.Cleanup(func() { sqlDB.Close() })
	// Six cells of at most 10 s each, and the build and start of the processes.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var cells []labrun.Pair
	for _, lock := range labrun.ShortPartition {
		cells = append(cells, labrun.Pair{Lock: lock, Scenario: "partition"})
	}
	res, err := labrun.Run(ctx, labrun.Config{Cells: cells, APIBin: servers.BuildAPI(t), DatabaseURL: dsn, RedisAddr: testenv.RedisAddr(t),
		Prefix: prefix, EtcdEndpoints: endpoints, DB: sqlDB, Redis: rdb, Logf: t.Logf, HistoryDir: t.TempDir()})
	var matrix strings.Builder
	labrun.WriteMatrix(&matrix, res)
	t.Logf("partition column:\n%s", matrix.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != len(cells) {
		t.Fatalf("%d cells, want %d", len(res.Cells), len(cells))
	}
	for _, c := range res.Cells {
		t.Logf("%s × partition: %s; fault: %s; answers %v", c.Lock, c, c.Fault, c.Answers)
		if !c.OK() {
			t.Errorf("%s × partition: %s, want %s", c.Lock, c, c.Expected)
		}
		if !strings.Contains(c.Fault, "cut off from") || !strings.Contains(c.Fault, "holding") {
			t.Errorf("%s × partition: the fault did not cut the lock's holder off: %s", c.Lock, c.Fault)
		}
		if n := c.Answers["internal"]; n > 0 {
			t.Errorf("%s × partition: %d answers 500 internal: %v", c.Lock, n, c.Answers)
		}
	}
}
