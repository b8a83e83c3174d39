package servers_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestPatroniFailover: two nodes elect a primary and stream to a synchronous standby; a row
// committed through the cluster's multi-host URL survives kill -9 of the primary (Patroni
// and PostgreSQL at once), after which the standby is promoted and the same URL writes
// there; the old primary, started again, rejoins as the new primary's synchronous standby.
func TestPatroniFailover(t *testing.T) {
	testenv.SkipShort(t, "a Patroni cluster of its own")
	t.Parallel()
	c := servers.StartPatroni(t, servers.PatroniOptions{})
	old := c.Primary()
	standby := c.Standby()
	t.Logf("primary %s, synchronous standby %s", old.Name, standby.Name)
	exec(t, c.DSN(), `CREATE TABLE kept (id int PRIMARY KEY)`, `INSERT INTO kept VALUES (1)`)

	killed := time.Now()
	old.Kill()
	if old.Running() {
		t.Fatalf("%s still runs after Kill", old.Name)
	}
	promoted := c.WaitPrimary(60*time.Second, old)
	t.Logf("%s promoted %v after the kill", promoted.Name, time.Since(killed).Round(100*time.Millisecond))
	if promoted != standby {
		t.Fatalf("%s promoted, want the standby %s", promoted.Name, standby.Name)
	}
	exec(t, c.DSN(), `INSERT INTO kept VALUES (2)`) // the same URL finds the new primary
	if got := count(t, c.DSN(), `SELECT count(*) FROM kept`); got != 2 {
		t.Errorf("rows after the failover = %d, want 2 (the one committed before, the one after)", got)
	}

	old.Start()
	c.WaitReplicating(90 * time.Second)
	if p := c.Primary(); p != promoted {
		t.Errorf("primary after the old one rejoined = %s, want %s", p.Name, promoted.Name)
	}
	// Synchronous means on the standby's disk, not yet replayed: wait for the replay.
	testenv.Eventually(t, 10*time.Second, "both rows replayed on the rejoined "+old.Name, func() bool {
		return count(t, old.DSN(), `SELECT count(*) FROM kept`) == 2
	})
}

// exec runs each statement on dsn, failing the test on an error.
func exec(t *testing.T, dsn string, statements ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, s := range statements {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// count runs a count query on dsn.
func count(t *testing.T, dsn, query string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestPatroniIsolatedPrimary: nodes in network namespaces of their own; the primary is cut
// off silently (a connection to it times out, nothing refuses it), the standby is promoted,
// and once the old primary's network is back it rejoins as the new primary's standby.
func TestPatroniIsolatedPrimary(t *testing.T) {
	testenv.SkipShort(t, "a Patroni cluster of its own")
	t.Parallel()
	if err := servers.NetnsSupported(); err != nil {
		servers.StartNetns(t) // skips, or fails under SECKILL_REQUIRE_ALL, saying why
	}
	c := servers.StartPatroni(t, servers.PatroniOptions{Netns: true})
	old := c.Primary()
	exec(t, c.DSN(), `CREATE TABLE kept (id int PRIMARY KEY)`, `INSERT INTO kept VALUES (1)`)

	cut := time.Now()
	old.Isolate()
	conn, err := net.DialTimeout("tcp", old.Addr, time.Second)
	if err == nil {
		conn.Close()
		t.Fatalf("connected to the isolated %s", old.Name)
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("dial the isolated %s: %v, want a timeout (nothing answers, nothing refuses)", old.Name, err)
	}
	promoted := c.WaitPrimary(60*time.Second, old)
	t.Logf("%s promoted %v after the cut", promoted.Name, time.Since(cut).Round(100*time.Millisecond))
	exec(t, c.DSN(), `INSERT INTO kept VALUES (2)`)

	old.Rejoin()
	c.WaitReplicating(90 * time.Second)
	if p := c.Primary(); p != promoted {
		t.Errorf("primary after the old one rejoined = %s, want %s", p.Name, promoted.Name)
	}
}

// TestPatroniCancelledCommitIsLost shows why nothing may cancel a COMMIT that waits for the
// synchronous standby (docs/deployment.md, "PostgreSQL high availability"): cancelled
// (pg_cancel_backend, as a client's cancel request does), it returns success with
// PostgreSQL's warning, though the standby never got it, and the failover that follows loses
// the row.
func TestPatroniCancelledCommitIsLost(t *testing.T) {
	testenv.SkipShort(t, "a Patroni cluster of its own")
	t.Parallel()
	c := servers.StartPatroni(t, servers.PatroniOptions{})
	old := c.Primary()
	exec(t, c.DSN(), `CREATE TABLE lost (id int PRIMARY KEY)`)

	old.PauseWALSenders()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(c.DSN())
	if err != nil {
		t.Fatal(err)
	}
	warned := make(chan string, 1)
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) { warned <- n.Message }
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	pid := conn.PgConn().PID()
	committed := make(chan error, 1)
	go func() {
		_, err := conn.Exec(ctx, `BEGIN; INSERT INTO lost VALUES (1); COMMIT`)
		committed <- err
	}()
	testenv.Eventually(t, 10*time.Second, "the COMMIT waiting for the standby", func() bool {
		return count(t, old.DSN(), fmt.Sprintf(`SELECT count(*) FROM pg_stat_activity WHERE pid = %d AND wait_event = 'SyncRep'`, pid)) == 1
	})
	exec(t, old.DSN(), fmt.Sprintf(`SELECT pg_cancel_backend(%d)`, pid))
	if err := <-committed; err != nil {
		t.Fatalf("the cancelled COMMIT: %v, want success", err)
	}
	if w := <-warned; !strings.Contains(w, "canceling wait for synchronous replication") {
		t.Errorf("the COMMIT's warning = %q, want PostgreSQL's canceling wait for synchronous replication", w)
	}
	old.Kill()
	c.WaitPrimary(60*time.Second, old)
	if got := count(t, c.DSN(), `SELECT count(*) FROM lost`); got != 0 {
		t.Fatalf("rows on the new primary = %d: the cancelled COMMIT reached the standby after all", got)
	}
	t.Log("the cancelled COMMIT returned success; the new primary has no row")
}
