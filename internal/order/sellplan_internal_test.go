package order

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/seckill/seckill/internal/testenv"
)

// TestSellPlanProbesPerBuyer: the plan of a batch's statement looks each buyer up (their live
// order, and their queue entry's order) in an index on (product_id, user_id, ...), so that its cost does not grow with the product's orders, even
// when it is made from statistics that say the orders table is empty (ANALYZE at the start of
// a sale) and kept for the connection's life as a generic plan (what PostgreSQL settles on
// after five runs of a prepared statement; forced here). sell.sql is planned as writeBatch
// runs it, after sellPlanning. The controls are the two halves of the fix alone, each seen
// reading the orders some other way: the plain join sell.sql had before (a hash join over
// every order of the product), and sell.sql without sellPlanning (a sequential scan of the
// table per buyer).
func TestSellPlanProbesPerBuyer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, testenv.Schema(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, stmt := range []string{"ANALYZE orders", "SET plan_cache_mode = force_generic_plan"} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	sell, _, err := pgx.NamedArgs{}.RewriteQuery(ctx, nil, sellSQL, nil)
	if err != nil {
		t.Fatal(err)
	}
	join := strings.Replace(sell,
		"req r\n    CROSS JOIN LATERAL (SELECT id, created_at, status, pay_by, paid_at FROM orders\n"+
			"        WHERE product_id = $1 AND user_id = r.u AND status IN ('pending', 'paid') LIMIT 1) o",
		"req r JOIN orders o ON o.product_id = $1 AND o.user_id = r.u AND o.status IN ('pending', 'paid')", 1)
	if join == sell {
		t.Fatal("the control could not rebuild the plain join from sell.sql")
	}
	for _, tc := range []struct {
		name, sql, setting string
		probes             bool
	}{
		{"sell.sql", sell, sellPlanning, true},
		{"control: the plain join", join, sellPlanning, false},
		{"control: sell.sql without its setting", sell, "", false},
	} {
		scans := orderScans(t, ctx, conn, tc.sql, tc.setting)
		probes := len(scans) > 0
		for _, s := range scans {
			probes = probes && strings.HasPrefix(s.Type, "Index") && strings.Contains(s.Cond, "user_id =")
		}
		t.Logf("%s: %+v", tc.name, scans)
		if probes != tc.probes {
			t.Errorf("%s: its scans of orders are %+v; want an index probe per buyer: %v", tc.name, scans, tc.probes)
		}
	}
}

// orderScans prepares sql on conn, plans it (after setting, in a transaction it rolls back)
// with EXPLAIN, and returns the nodes of the plan that read the orders table.
func orderScans(t *testing.T, ctx context.Context, conn *pgx.Conn, sql, setting string) []planNode {
	t.Helper()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if setting != "" {
		if _, err := tx.Exec(ctx, setting); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tx.Exec(ctx, "PREPARE sell_plan(bigint, bigint, bigint[], text[]) AS "+sql); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "DEALLOCATE sell_plan") // PREPARE outlives a rolled-back transaction
	var plan []struct{ Plan planNode }
	if err := tx.QueryRow(ctx, "EXPLAIN (FORMAT JSON) EXECUTE sell_plan(1, 1, '{1, 2, 3}', '{1-0, 2-0, 3-0}')").Scan(&plan); err != nil {
		t.Fatal(err)
	}
	return plan[0].Plan.orderScans(nil)
}

// planNode is what orderScans reads of a node of EXPLAIN's JSON.
type planNode struct {
	Type     string     `json:"Node Type"`
	Relation string     `json:"Relation Name"`
	Cond     string     `json:"Index Cond"`
	Plans    []planNode `json:"Plans"`
}

func (n planNode) orderScans(out []planNode) []planNode {
	if n.Relation == "orders" && n.Type != "ModifyTable" {
		out = append(out, planNode{Type: n.Type, Relation: n.Relation, Cond: n.Cond})
	}
	for _, c := range n.Plans {
		out = c.orderScans(out)
	}
	return out
}
