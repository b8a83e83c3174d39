package labrun_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/labrun"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestEtcdSafeUnderFaults runs the etcd lock's crash, pause and failover cells as `loadtest
// lab` does: three real API processes with ETCD_ENDPOINTS, then kill -9 of the process that
// holds the lock, SIGSTOP of the holder for two leases, and the Redis master killed under the
// holder (its Sentinel stage of its own). Every sale must sell out exactly, with every answer
// true and none a 500: the lease ends with the holder, a resumed holder is told of its loss
// (busy), and its older fence would be rejected; a Redis failover does not touch a lock in
// etcd. It is skipped with -short, without ETCD_ENDPOINTS and without redis-server.
func TestEtcdSafeUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three API processes; skipped with -short")
	}
	endpoints := strings.Join(testenv.EtcdEndpoints(t), ",")
	servers.RedisBin(t) // the failover cell starts redis-servers of its own
	dsn := testenv.Schema(t)
	rdb, prefix := testenv.Redis(t) // its cleanup deletes the name tags and sold-out marks
	gdb, err := db.Open(dsn, db.PoolOptions{MaxOpen: 4})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := gdb.DB()
	t.Cleanup(func() { sqlDB.Close() })
	// Two cells of at most 10 s each, one of 25 s with its stage, and the build and start of
	// the processes.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cells := []labrun.Pair{{Lock: "etcd", Scenario: "crash"}, {Lock: "etcd", Scenario: "pause"}, {Lock: "etcd", Scenario: "failover"}}
	res, err := labrun.Run(ctx, labrun.Config{Cells: cells, APIBin: servers.BuildAPI(t), DatabaseURL: dsn, RedisAddr: testenv.RedisAddr(t),
		Prefix: prefix, EtcdEndpoints: endpoints, DB: sqlDB, Redis: rdb, Logf: t.Logf, HistoryDir: t.TempDir()})
	var matrix strings.Builder
	labrun.WriteMatrix(&matrix, res)
	t.Logf("etcd × crash, pause, failover:\n%s", matrix.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != len(cells) {
		t.Fatalf("%d cells, want %d", len(res.Cells), len(cells))
	}
	for _, c := range res.Cells {
		if !c.OK() || c.Verdict != labrun.Safe || c.Oversold != 0 {
			t.Errorf("%s × %s: %s, want safe", c.Lock, c.Scenario, c)
		}
		if !strings.Contains(c.Fault, "SIG") || !strings.Contains(c.Fault, "holding") {
			t.Errorf("%s × %s: the fault did not land on the lock's holder: %s", c.Lock, c.Scenario, c.Fault)
		}
		if n := c.Answers["internal"]; n > 0 { // a holder told of its loss answers busy
			t.Errorf("%s × %s: %d answers 500 internal: %v", c.Lock, c.Scenario, n, c.Answers)
		}
		if c.Scenario == "pause" && !strings.Contains(c.Fault, "for 4s") {
			t.Errorf("etcd × pause: %s, want a pause of 4 s, twice etcd's shortest lease", c.Fault)
		}
	}
}
