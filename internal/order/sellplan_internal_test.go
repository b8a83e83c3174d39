package order

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
)

// TestSellPlanProbesPerBuyer: a batch's statement reads one index entry per buyer, however
// many orders the product already has, even on the plan PostgreSQL keeps for a connection
// from the start of a sale, when the orders table was empty and analyzed as such. The service's own connection
// (one, so that its cached statement is the one examined) runs a batch on the empty table,
// with generic plans forced (what PostgreSQL settles on after five runs); then the product
// gets 2,000 orders, and the plan cached for sell.sql must read at most one order per buyer.
// The controls, prepared and first run on another connection the same way, are the two
// halves of the fix alone: the plain join sell.sql had before, and sell.sql without its
// planner setting. Each must be seen reading every order of the product.
func TestSellPlanProbesPerBuyer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.Schema(t)
	gdb := testenv.DB(t, dsn)
	sqlDB, err := gdb.DB()
	if err != nil {
		t.Fatal(err)
	}
	sqlDB.SetMaxOpenConns(1)
	// Statistics that say the table is empty (an emptied table vacuumed, say) are the worst
	// case: a table never analyzed is costed as ten pages, which the join still reads whole.
	for _, stmt := range []string{"ANALYZE orders", "SET plan_cache_mode = force_generic_plan"} {
		if err := gdb.Exec(stmt).Error; err != nil {
			t.Fatal(err)
		}
	}
	store := inventory.NewStore(gdb)
	rdb, prefix := testenv.Redis(t)
	keys := inventory.Keys{Prefix: prefix}
	s := NewService(Deps{Products: store, SoldOut: inventory.NewSoldOut(rdb, keys, slog.New(slog.DiscardHandler)), Keys: keys}, Config{})
	p, err := store.Create(ctx, inventory.NewProduct{Name: "plan", Stock: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	args := pgx.NamedArgs{"id": p.ID, "fence": int64(1), "users": []int64{1, 2, 3}}
	sellText, _, err := args.RewriteQuery(ctx, nil, sellSQL, nil)
	if err != nil {
		t.Fatal(err)
	}
	join := strings.Replace(sellText,
		"req r\n    CROSS JOIN LATERAL (SELECT id, created_at FROM orders WHERE product_id = $1 AND user_id = r.u LIMIT 1) o",
		"req r JOIN orders o ON o.product_id = $1 AND o.user_id = r.u", 1)
	if join == sellText {
		t.Fatal("the control could not rebuild the plain join from sell.sql")
	}
	ctl, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close(ctx)
	controls := map[string]string{"the plain join": join, "sell.sql without enable_seqscan off": sellText}
	if _, err := ctl.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatal(err)
	}
	for name, text := range controls {
		if _, err := ctl.Prepare(ctx, stmtName(name), text); err != nil {
			t.Fatal(err)
		}
		explainRead(t, ctx, ctl, stmtName(name), p.ID, 1000) // made and cached on the empty table
	}
	if _, _, err := s.writeBatch(ctx, p, []int64{1, 2, 3}, 1); err != nil {
		t.Fatal(err)
	}
	if err := gdb.Exec("INSERT INTO orders (product_id, user_id) SELECT ?, g FROM generate_series(100, 2099) g", p.ID).Error; err != nil {
		t.Fatal(err)
	}

	conn, err := sqlDB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		pc := dc.(*stdlib.Conn).Conn()
		var name string
		if err := pc.QueryRow(ctx, "SELECT name FROM pg_prepared_statements WHERE statement = $1", sellText).Scan(&name); err != nil {
			return fmt.Errorf("the service's cached sell statement: %w", err)
		}
		if read := explainRead(t, ctx, pc, name, p.ID, 5000); read > 5 {
			t.Errorf("sell.sql read %d orders for 5 buyers, want at most one each", read)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range controls {
		if read := explainRead(t, ctx, ctl, stmtName(name), p.ID, 6000); read < 2000 {
			t.Errorf("control %s read %d orders, want all 2,003: the test cannot see the full read", name, read)
		}
	}
}

func stmtName(control string) string { return strings.NewReplacer(" ", "_", ".", "_").Replace(control) }

// explainRead runs the prepared statement name for 5 new buyers (first..first+4) of product
// under EXPLAIN ANALYZE in a transaction it rolls back, and returns how many rows of orders
// its plan read (rows returned and rows removed by a filter, over every loop of every node
// that scans orders).
func explainRead(t *testing.T, ctx context.Context, c *pgx.Conn, name string, product int64, first int) int {
	t.Helper()
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	q := fmt.Sprintf("EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE %s(%d, 1, ARRAY[%d, %d, %d, %d, %d]::bigint[])",
		name, product, first, first+1, first+2, first+3, first+4)
	var plan []struct{ Plan planNode }
	if err := tx.QueryRow(ctx, q).Scan(&plan); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return plan[0].Plan.ordersRead()
}

// planNode is what explainRead reads of a node of EXPLAIN's JSON.
type planNode struct {
	Type     string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Rows     float64    `json:"Actual Rows"`
	Loops    float64    `json:"Actual Loops"`
	Removed  float64    `json:"Rows Removed by Filter"`
	Plans    []planNode `json:"Plans"`
}

func (n planNode) ordersRead() int {
	read := 0
	if n.Relation == "orders" && n.Type != "ModifyTable" {
		read = int((n.Rows + n.Removed) * n.Loops)
	}
	for _, c := range n.Plans {
		read += c.ordersRead()
	}
	return read
}
