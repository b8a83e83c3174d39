package labrun_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/history"
	"github.com/seckill/seckill/internal/labrun"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestLockHistoryNegativeControl: the lock histories of the pause scenario, recorded by the
// three API processes, must fail the linearizability checker for a lab lock without a fence
// (watchdog: its holder, paused past its lease, wakes up and writes after another took the
// lock) and pass it for fence, the same lock with a fence and nothing else, whose resumed
// holder's write PostgreSQL refuses (a failed write, dropped), and for dlock, whose resumed
// holder is also told of its loss. The failing history's porcupine page is written to the run's
// history directory, and the processes' history file is removed when the run ends.
func TestLockHistoryNegativeControl(t *testing.T) {
	testenv.SkipShort(t, "three API processes and a SIGSTOP")
	dsn := testenv.Schema(t)
	rdb, prefix := testenv.Redis(t)
	gdb, err := db.Open(dsn, db.PoolOptions{MaxOpen: 4})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := gdb.DB()
	t.Cleanup(func() { sqlDB.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	cells := []labrun.Pair{{Lock: "watchdog", Scenario: "pause"}, {Lock: "fence", Scenario: "pause"}, {Lock: "dlock", Scenario: "pause"}}
	res, err := labrun.Run(ctx, labrun.Config{Cells: cells, APIBin: servers.BuildAPI(t), DatabaseURL: dsn, RedisAddr: testenv.RedisAddr(t),
		Prefix: prefix, DB: sqlDB, Redis: rdb, Logf: t.Logf, HistoryDir: dir})
	var matrix strings.Builder
	labrun.WriteMatrix(&matrix, res)
	t.Logf("watchdog, fence, dlock × pause:\n%s", matrix.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Cells) != len(cells) {
		t.Fatalf("%d cells, want %d", len(res.Cells), len(cells))
	}
	for _, c := range res.Cells {
		h := c.History
		if h == nil || h.Error != "" || h.Ops == 0 {
			t.Fatalf("%s × %s: history %+v, want one checked", c.Lock, c.Scenario, h)
		}
		if !strings.Contains(c.Fault, "SIGSTOP") || !strings.Contains(c.Fault, "holding") {
			t.Errorf("%s × %s: the pause did not land on the lock's holder: %s", c.Lock, c.Scenario, c.Fault)
		}
		switch c.Lock {
		case "watchdog":
			if h.Verdict != string(history.Illegal) || c.Verdict != labrun.Oversold {
				t.Errorf("watchdog × pause: %s, %s; want oversold and an illegal history", c, h)
			}
			if _, err := os.Stat(h.Page); err != nil || filepath.Dir(h.Page) != dir {
				t.Errorf("watchdog × pause: the checker's page %q in %s: %v", h.Page, dir, err)
			}
		case "fence", "dlock":
			if h.Verdict != string(history.Linearizable) || c.Verdict != labrun.Safe || h.Page != "" {
				t.Errorf("%s × pause: %s, %s; want safe and a linearizable history", c.Lock, c, h)
			}
			// dlock's resumed holder is told of its loss; fence's write is refused: each is
			// dropped, changing nothing.
			if h.Dropped == 0 {
				t.Errorf("%s × pause: %s; want the resumed holder's loss or refused write recorded", c.Lock, h)
			}
		}
		if !c.OK() {
			t.Errorf("%s × %s: not as expected: %s, %s", c.Lock, c.Scenario, c, h)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "locks.jsonl")); !os.IsNotExist(err) {
		t.Errorf("the processes' lock history is left after the run: %v", err)
	}
}
