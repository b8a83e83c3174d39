package db_test

import (
	"context"
	"database/sql"
	"net/url"
	"testing"
	"time"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/testenv"
)

// TestIdleInTransactionTimeout: with the option, every connection carries
// idle_in_transaction_session_timeout, and PostgreSQL ends a transaction left idle past it,
// rolling back what it wrote, so that its COMMIT fails; a DSN that sets the parameter itself
// wins; without the option, the server's setting stays.
func TestIdleInTransactionTimeout(t *testing.T) {
	t.Parallel()
	dsn := testenv.Schema(t)
	open := func(dsn string, d time.Duration) *sql.DB {
		t.Helper()
		gdb, err := db.Open(dsn, db.PoolOptions{MaxOpen: 2, IdleInTransactionTimeout: d})
		if err != nil {
			t.Fatal(err)
		}
		sqlDB, _ := gdb.DB()
		t.Cleanup(func() { sqlDB.Close() })
		return sqlDB
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	server := ""
	if err := open(dsn, 0).QueryRowContext(ctx, `SHOW idle_in_transaction_session_timeout`).Scan(&server); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, dsn string
		d         time.Duration
		want      string
	}{
		{"set", dsn, 300 * time.Millisecond, "300ms"},
		{"the DSN's wins", withParam(t, dsn, "idle_in_transaction_session_timeout", "4000"), 300 * time.Millisecond, "4s"},
		{"unset: the server's", dsn, 0, server},
	} {
		var got string
		if err := open(tc.dsn, tc.d).QueryRowContext(ctx, `SHOW idle_in_transaction_session_timeout`).Scan(&got); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got != tc.want {
			t.Errorf("%s: idle_in_transaction_session_timeout = %s, want %s", tc.name, got, tc.want)
		}
	}

	pool := open(dsn, 300*time.Millisecond)
	tx, err := pool.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO products (name, stock, initial_stock) VALUES ('abandoned', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // idle in transaction, past the timeout
	if err := tx.Commit(); err == nil {
		t.Error("COMMIT of a transaction left idle past the timeout succeeded")
	} else {
		t.Logf("COMMIT of a transaction left idle past the timeout: %v", err)
	}
	var n int
	if err := pool.QueryRowContext(ctx, `SELECT count(*) FROM products WHERE name = 'abandoned'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("rows of the abandoned transaction: %d (%v), want 0", n, err)
	}
}

// withParam returns the URL dsn with the query parameter key set to value.
func withParam(t *testing.T, dsn, key, value string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}
