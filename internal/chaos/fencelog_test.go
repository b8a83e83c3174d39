//go:build linux

package chaos_test

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/seckill/seckill/db"
)

// fenceLog records every committed write of a product row in a test's own schema: a trigger
// of the test's (never part of the schema the service migrates) logs each UPDATE of products
// with the fence before and after it, the stock before and after it, the writing session's
// application_name, and the time. Rows of a transaction that rolled back vanish with it, so
// the log is the committed history of the rows, in commit order per product: every writer
// of a product row holds the row's lock until it commits, so the next UPDATE of that row (and
// its log row) comes after that commit.
//
// For the dlock strategy each write of a product is its own lock hold (a batch, a bundle),
// and every hold gets a fence minted anew, so the fences of a product's committed writes must
// strictly increase: a repeated fence means two holders thought they held the same lock.
type fenceLog struct {
	db *sql.DB
}

// fenceWrite is one committed UPDATE of a product row.
type fenceWrite struct {
	seq                int64
	oldFence, newFence int64
	oldStock, newStock int
	app                string // the writing session's application_name
	at                 time.Time
}

// newFenceLog installs the trigger in the schema that dsn's search_path names (a test's own:
// testenv.Schema), before the API processes write.
func newFenceLog(t *testing.T, dsn string) *fenceLog {
	t.Helper()
	gdb, err := db.Open(dsn, db.PoolOptions{MaxOpen: 2})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := gdb.DB()
	t.Cleanup(func() { sqlDB.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, stmt := range []string{
		`CREATE TABLE chaos_fence_log (
			seq bigserial PRIMARY KEY, product_id bigint NOT NULL,
			old_fence bigint NOT NULL, new_fence bigint NOT NULL,
			old_stock integer NOT NULL, new_stock integer NOT NULL,
			app text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`,
		`CREATE FUNCTION chaos_log_fence() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO chaos_fence_log (product_id, old_fence, new_fence, old_stock, new_stock, app)
			VALUES (NEW.id, OLD.fence, NEW.fence, OLD.stock, NEW.stock, current_setting('application_name'));
			RETURN NEW;
		END $$`,
		`CREATE TRIGGER chaos_fence AFTER UPDATE ON products FOR EACH ROW EXECUTE FUNCTION chaos_log_fence()`,
	} {
		if _, err := sqlDB.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("install the fence log: %v", err)
		}
	}
	return &fenceLog{db: sqlDB}
}

// writes returns the committed writes of product id, in commit order.
func (f *fenceLog) writes(t *testing.T, id int64) []fenceWrite {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := f.db.QueryContext(ctx, `SELECT seq, old_fence, new_fence, old_stock, new_stock, app, at
		FROM chaos_fence_log WHERE product_id = $1 ORDER BY seq`, id)
	if err != nil {
		t.Fatalf("read the fence log: %v", err)
	}
	defer rows.Close()
	var out []fenceWrite
	for rows.Next() {
		var w fenceWrite
		if err := rows.Scan(&w.seq, &w.oldFence, &w.newFence, &w.oldStock, &w.newStock, &w.app, &w.at); err != nil {
			t.Fatalf("read the fence log: %v", err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read the fence log: %v", err)
	}
	return out
}

// checkIncreasing fails t unless every committed write of product id carries a fence larger
// than the one before it, and returns the writes.
func (f *fenceLog) checkIncreasing(t *testing.T, id int64) []fenceWrite {
	t.Helper()
	ws := f.writes(t, id)
	bad := 0
	for _, w := range ws {
		if w.newFence <= w.oldFence {
			if bad++; bad <= 5 {
				t.Errorf("product %d: write #%d by %q at %s carries fence %d, not above the row's %d (stock %d -> %d)",
					id, w.seq, w.app, w.at.Format("15:04:05.000"), w.newFence, w.oldFence, w.oldStock, w.newStock)
			}
		}
	}
	if bad > 5 {
		t.Errorf("product %d: %d writes in all with a fence not above the one before", id, bad)
	}
	t.Logf("product %d: %d committed writes, each fence above the one before: %v", id, len(ws), bad == 0)
	return ws
}

// longestGap returns the longest time between two committed writes of ws (or between from
// and the first write, or the last write and to) within [from, to], and where it began.
func longestGap(ws []fenceWrite, from, to time.Time) (gap time.Duration, began time.Time) {
	prev := from
	for _, w := range ws {
		if w.at.Before(from) || w.at.After(to) {
			continue
		}
		if d := w.at.Sub(prev); d > gap {
			gap, began = d, prev
		}
		prev = w.at
	}
	if d := to.Sub(prev); d > gap {
		gap, began = d, prev
	}
	return gap, began
}

// byApp counts ws by the application_name that wrote them.
func byApp(ws []fenceWrite) string {
	n := map[string]int{}
	for _, w := range ws {
		n[w.app]++
	}
	return fmt.Sprint(n)
}
