package servers_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// seckillINI is deploy/pgbouncer/seckill.ini, what the service needs of a PgBouncer.
func seckillINI(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "pgbouncer", "seckill.ini"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// cacheDescribe is what a client of a transaction pool adds to its URL: pgx then prepares no
// named statement, which the pool would hand to other clients' transactions.
const cacheDescribe = "&default_query_exec_mode=cache_describe"

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

// tryLock is pg_try_advisory_lock(key) on c, what goose's session locker takes before it
// migrates (lock.NewPostgresSessionLocker).
func tryLock(t *testing.T, c *pgx.Conn, key int64) bool {
	t.Helper()
	var ok bool
	if err := c.QueryRow(context.Background(), "SELECT pg_try_advisory_lock($1)", key).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestPgBouncerSessionLock: a session advisory lock excludes a second session on PostgreSQL,
// and does not through a transaction pool. With a pool of one server connection, two clients
// run on the same server session, which holds the lock already, and both obtain it: two
// migrators would both migrate. So `api migrate` connects to PostgreSQL itself.
func TestPgBouncerSessionLock(t *testing.T) {
	dsn := testenv.DatabaseURL(t)
	pgb := servers.StartPgBouncer(t, dsn, servers.PgBouncerOptions{Pools: map[string]int{"one": 1}, Settings: seckillINI(t)})
	key := rand.Int64()
	direct1, direct2 := connect(t, dsn), connect(t, dsn)
	if !tryLock(t, direct1, key) || tryLock(t, direct2, key) {
		t.Fatal("on PostgreSQL: want the first session to obtain the lock and the second refused")
	}
	if _, err := direct1.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", key); err != nil {
		t.Fatal(err)
	}
	pooled1, pooled2 := connect(t, pgb.DSN("one")+cacheDescribe), connect(t, pgb.DSN("one")+cacheDescribe)
	t.Cleanup(func() { pooled1.Exec(context.Background(), "SELECT pg_advisory_unlock_all()") })
	first, second := tryLock(t, pooled1, key), tryLock(t, pooled2, key)
	if !first || !second {
		t.Fatalf("through the transaction pool: first %v, second %v; want both to obtain the lock", first, second)
	}
}

// TestPgBouncerIdleTransaction: with deploy/pgbouncer/seckill.ini, a transaction that holds a
// row lock through PgBouncer and goes idle (its process frozen or cut off) is ended after
// idle_transaction_timeout (11 s), its row unlocked; without that line, the row stays locked.
// The API's own bound, idle_in_transaction_session_timeout, is a startup parameter PgBouncer
// is told to ignore.
func TestPgBouncerIdleTransaction(t *testing.T) {
	testenv.SkipShort(t, "a transaction idle for 11 s")
	t.Parallel()
	dsn := testenv.Schema(t)
	direct := connect(t, dsn)
	ctx := context.Background()
	if _, err := direct.Exec(ctx, `INSERT INTO products (id, name, stock, initial_stock) VALUES (1, 'a', 1, 1), (2, 'b', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	without := strings.ReplaceAll(seckillINI(t), "idle_transaction_timeout = 11", "")
	if without == seckillINI(t) {
		t.Fatal("seckill.ini sets no idle_transaction_timeout = 11")
	}
	settings := map[int64]string{1: seckillINI(t), 2: without}
	start := time.Now()
	idle := map[int64]pgx.Tx{}
	for id, s := range settings {
		pgb := servers.StartPgBouncer(t, dsn, servers.PgBouncerOptions{Settings: s})
		tx, err := connect(t, pgb.DSN("")+cacheDescribe).Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "SELECT stock FROM products WHERE id = $1 FOR UPDATE", id); err != nil {
			t.Fatal(err)
		}
		idle[id] = tx
	}
	locked := func(id int64) bool {
		tx, err := direct.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		_, err = tx.Exec(ctx, "SELECT stock FROM products WHERE id = $1 FOR UPDATE NOWAIT", id)
		return err != nil && strings.Contains(err.Error(), "55P03") // lock_not_available
	}
	testenv.Eventually(t, 20*time.Second, "the idle transaction's row unlocked", func() bool {
		time.Sleep(200 * time.Millisecond)
		return !locked(1)
	})
	freed := time.Since(start)
	t.Logf("row unlocked %s after the transaction went idle", freed.Round(100*time.Millisecond))
	if freed < 10*time.Second {
		t.Errorf("row unlocked after %s, before idle_transaction_timeout (11 s)", freed)
	}
	if _, err := idle[1].Exec(ctx, "SELECT 1"); err == nil {
		t.Error("the idle transaction goes on after PgBouncer ended it")
	}
	if time.Sleep(max(0, 14*time.Second-time.Since(start))); !locked(2) {
		t.Errorf("without idle_transaction_timeout: row unlocked after %s", time.Since(start))
	}
}
