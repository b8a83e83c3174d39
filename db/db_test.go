package db_test

import (
	"context"
	"strings"
	"testing"

	"gorm.io/gorm"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/testenv"
)

// TestSchemaGuards: the constraints that hold even when every lock fails.
func TestSchemaGuards(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	mustExec, mustFail := guards(t, gdb)
	mustExec(`INSERT INTO products (id, name, stock, initial_stock) VALUES (1, 'p', 1, 1)`)
	mustFail("products_stock_check", `UPDATE products SET stock = -1 WHERE id = 1`)
	mustFail("products_strategy_check", `UPDATE products SET strategy = 'magic' WHERE id = 1`)
	mustExec(`INSERT INTO orders (product_id, user_id) VALUES (1, 7)`)
	mustFail("orders_live_key", `INSERT INTO orders (product_id, user_id) VALUES (1, 7)`)
	mustFail("orders_product_id_fkey", `INSERT INTO orders (product_id, user_id) VALUES (2, 7)`)
	mustFail("orders_user_id_check", `INSERT INTO orders (product_id, user_id) VALUES (1, 0)`)
}

func TestMigrateIsIdempotent(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t) // migrated once already
	sqlDB, err := gdb.DB()
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(context.Background(), sqlDB); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
}

// guards returns mustExec, which runs SQL on gdb and fails t if it fails, and mustFail, which
// fails t unless the SQL is refused by constraint.
func guards(t *testing.T, gdb *gorm.DB) (mustExec func(string, ...any), mustFail func(string, string, ...any)) {
	mustExec = func(sql string, args ...any) {
		t.Helper()
		if err := gdb.Exec(sql, args...).Error; err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	mustFail = func(constraint, sql string, args ...any) {
		t.Helper()
		err := gdb.Exec(sql, args...).Error
		if err == nil || !strings.Contains(err.Error(), constraint) {
			t.Fatalf("%s = %v, want a violation of %s", sql, err, constraint)
		}
	}
	return mustExec, mustFail
}
