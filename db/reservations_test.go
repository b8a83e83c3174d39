package db_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/testenv"
)

// TestReservationGuards: the constraints of 00005_reservations.sql refuse every impossible
// state of a reservation, whatever the application does.
func TestReservationGuards(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	mustExec, mustFail := guards(t, gdb)
	mustExec(`INSERT INTO products (id, name, stock, initial_stock) VALUES (1, 'final', 5, 5)`)
	mustExec(`INSERT INTO products (id, name, stock, initial_stock, pay_within_ms) VALUES (2, 'window', 5, 5, 60000)`)
	mustFail("products_pay_within_check", `INSERT INTO products (name, stock, initial_stock, strategy, pay_within_ms)
		VALUES ('n', 1, 1, 'naive', 1000)`)
	mustFail("products_pay_within_ms_check", `UPDATE products SET pay_within_ms = -1 WHERE id = 2`)

	// The first status comes from the product, whatever the INSERT says.
	mustExec(`INSERT INTO orders (id, product_id, user_id, status) VALUES (101, 1, 7, 'pending')`)
	mustExec(`INSERT INTO orders (id, product_id, user_id, status) VALUES (102, 2, 7, 'paid')`)
	var status string
	var payBy sql.NullTime
	if err := gdb.Raw(`SELECT status, pay_by FROM orders WHERE id = 101`).Row().Scan(&status, &payBy); err != nil {
		t.Fatal(err)
	}
	if status != "paid" || payBy.Valid {
		t.Fatalf("window-less order: status %q, pay_by %v; want paid without pay_by", status, payBy)
	}
	if err := gdb.Raw(`SELECT status, pay_by FROM orders WHERE id = 102`).Row().Scan(&status, &payBy); err != nil {
		t.Fatal(err)
	}
	if status != "pending" || !payBy.Valid {
		t.Fatalf("order with a window: status %q, pay_by %v; want pending with pay_by", status, payBy)
	}

	mustFail("orders_live_key", `INSERT INTO orders (product_id, user_id) VALUES (2, 7)`)
	mustFail("orders_final_status", `UPDATE orders SET status = 'expired', ended_at = now() WHERE id = 101`)
	mustFail("orders_pay_by_check", `UPDATE orders SET pay_by = NULL WHERE id = 102`)
	mustFail("orders_paid_at_check", `UPDATE orders SET status = 'paid' WHERE id = 102`)
	mustFail("orders_paid_in_time_check", `UPDATE orders SET status = 'paid', paid_at = pay_by WHERE id = 102`)
	mustFail("orders_ended_at_check", `UPDATE orders SET status = 'cancelled' WHERE id = 102`)
	mustFail("orders_expired_late_check", `UPDATE orders SET status = 'expired', ended_at = clock_timestamp() WHERE id = 102`)
	mustFail("orders_cancelled_early_check", `UPDATE orders SET status = 'cancelled', ended_at = pay_by WHERE id = 102`)
	mustFail("orders_gate_returned_check", `UPDATE orders SET gate_returned_at = now() WHERE id = 102`)

	// Cancelled, the buyer may buy again; a final status never changes.
	mustExec(`UPDATE orders SET status = 'cancelled', ended_at = clock_timestamp() WHERE id = 102`)
	mustExec(`INSERT INTO orders (id, product_id, user_id) VALUES (103, 2, 7)`)
	mustFail("orders_final_status", `UPDATE orders SET status = 'pending', ended_at = NULL WHERE id = 102`)
	mustExec(`UPDATE orders SET status = 'paid', paid_at = clock_timestamp() WHERE id = 103`)
	mustFail("orders_final_status", `UPDATE orders SET status = 'cancelled', paid_at = NULL, ended_at = clock_timestamp() WHERE id = 103`)

	// 00006_queue_entry.sql: a queue entry is written once, ended or not; another user's
	// entry with the same id (a Redis failed over to a lagging replica) is its own purchase.
	mustExec(`INSERT INTO orders (id, product_id, user_id, queue_entry) VALUES (104, 2, 9, '5-0')`)
	mustExec(`UPDATE orders SET status = 'cancelled', ended_at = clock_timestamp() WHERE id = 104`)
	mustFail("orders_queue_entry_key", `INSERT INTO orders (product_id, user_id, queue_entry) VALUES (2, 9, '5-0')`)
	mustExec(`INSERT INTO orders (product_id, user_id, queue_entry) VALUES (2, 10, '5-0')`)
}

// TestReservationsMigrateDown: 00005's Down (after 00006's) undoes its Up on a database with
// reservations in every state, and the Ups apply again.
func TestReservationsMigrateDown(t *testing.T) {
	t.Parallel()
	gdb := testenv.Postgres(t)
	sqlDB, err := gdb.DB()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO products (id, name, stock, initial_stock, pay_within_ms) VALUES (1, 'window', 3, 5, 60000)`,
		`INSERT INTO orders (id, product_id, user_id) VALUES (1, 1, 7), (2, 1, 8)`,
		`UPDATE orders SET status = 'cancelled', ended_at = clock_timestamp() WHERE id = 2`,
		`INSERT INTO orders (id, product_id, user_id, queue_entry) VALUES (3, 1, 8, '1-0')`,
	} {
		if err := gdb.Exec(q).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, db.Migrations(), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := p.DownTo(ctx, 4); err != nil {
		t.Fatalf("down: %v", err)
	}
	var orders int
	if err := gdb.Raw(`SELECT count(*) FROM orders`).Scan(&orders).Error; err != nil {
		t.Fatal(err)
	}
	if got, want := orders, 2; got != want {
		t.Fatalf("orders after down = %d, want %d (the live ones)", got, want)
	}
	if _, err := p.Up(ctx); err != nil {
		t.Fatalf("up again: %v", err)
	}
}
