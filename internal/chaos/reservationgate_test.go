//go:build linux

package chaos_test

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/db"
)

// installEndLog installs, in the schema that dsn's search_path names (a test's own:
// testenv.Schema), before the API processes write, a test-only trigger that logs which
// PostgreSQL session (application_name) ended each reservation. A row is there once the
// return committed.
func installEndLog(t *testing.T, dsn string) {
	t.Helper()
	gdb, err := db.Open(dsn, db.PoolOptions{MaxOpen: 1})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := gdb.DB()
	defer sqlDB.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, stmt := range []string{
		`CREATE TABLE chaos_end_log (order_id bigint NOT NULL, app text NOT NULL)`,
		`CREATE FUNCTION chaos_log_end() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF OLD.status = 'pending' AND NEW.status IN ('expired', 'cancelled') THEN
				INSERT INTO chaos_end_log VALUES (NEW.id, current_setting('application_name'));
			END IF;
			RETURN NEW;
		END $$`,
		`CREATE TRIGGER chaos_end AFTER UPDATE OF status ON orders FOR EACH ROW EXECUTE FUNCTION chaos_log_end()`,
	} {
		if _, err := sqlDB.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("install the end log: %v", err)
		}
	}
}

// returnedToGate reports whether the gate of o's product (on b, through rdb) took o's unit
// back: o is in its set of returned orders.
func returnedToGate(t *testing.T, rdb redis.UniversalClient, b backend, o leftOrder) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	in, err := rdb.SIsMember(ctx, b.keys().GateReturned(o.product), o.id).Result()
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// leftOrder is an ended reservation whose return to the gate a process had not recorded.
type leftOrder struct{ id, product int64 }

// catchBetweenCommitAndGate stops p (SIGSTOP) once a reservation of one of products that p's
// session (application_name app) ended is committed in PostgreSQL without gate_returned_at:
// p is between a return's COMMIT and recording the gate's part of it. It returns how many
// times it stopped p to catch it, and those orders, and leaves p stopped.
func catchBetweenCommitAndGate(t *testing.T, sqlDB *sql.DB, p *apiProc, app string, products []int64) (int, []leftOrder) {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	for tries, deadline := 1, time.Now().Add(40*time.Second); ; tries++ {
		p.Signal(syscall.SIGSTOP)
		left, err := ordersLeft(sqlDB, app, products)
		if err == nil && len(left) > 0 {
			return tries, left
		}
		p.Signal(syscall.SIGCONT)
		if time.Now().After(deadline) {
			t.Fatalf("%s never caught between a return's COMMIT and the gate in %d tries (%v)", p.Name, tries, err)
		}
		time.Sleep(time.Duration(2+rng.IntN(15)) * time.Millisecond)
	}
}

// ordersLeft returns the orders of products that the session app ended and whose return to
// the gate is not recorded.
func ordersLeft(sqlDB *sql.DB, app string, products []int64) ([]leftOrder, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	rows, err := sqlDB.QueryContext(ctx, `SELECT o.id, o.product_id FROM orders o JOIN chaos_end_log l ON l.order_id = o.id
		WHERE l.app = $1 AND o.product_id = ANY($2) AND o.gate_returned_at IS NULL`, app, products)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var left []leftOrder
	for rows.Next() {
		var o leftOrder
		if err := rows.Scan(&o.id, &o.product); err != nil {
			return nil, err
		}
		left = append(left, o)
	}
	return left, rows.Err()
}

// TestReservationKilledBetweenCommitAndGate: two API processes, each sweeping every 20 ms,
// sell a redis and a queue product with a 500 ms payment window (buyers as in
// TestReservationKillAndPauseMidSweep). One is killed (SIGKILL) between a return's COMMIT in
// PostgreSQL and the record of its gate part (gate_returned_at): frozen (SIGSTOP) when an
// order its session ended (a test-only trigger logs which session ends each reservation) has
// none, then killed. Its gate part may have run or not (the gate's set of returned orders
// says which); either way the survivor's sweeper drives it again after 2 s, and the gate
// takes each order back once: after the drain every such order is recorded returned, the
// gate agrees with PostgreSQL, and the invariants of TestReservationKillAndPauseMidSweep hold.
func TestReservationKilledBetweenCommitAndGate(t *testing.T) {
	log := faultTest(t)
	b, rdb := sharedBackend(t)
	installEndLog(t, b.dsn)
	apps := newPGApps()
	procs := apps.start(t, b, resvEnv, "victim", "survivor")
	victim, survivor := procs[0], procs[1]
	sales := resvSales(t, b, rdb, procs, 16, "redis", "queue")
	log("sale of 2 products under way on 2 processes")
	waitReturns(t, 8, sales...)

	products := []int64{sales[0].id, sales[1].id}
	tries, left := catchBetweenCommitAndGate(t, sales[0].db, victim, apps.of(victim.Name), products)
	for _, s := range sales {
		s.kill(victim)
	}
	victim.Kill()
	inGate := 0
	for _, o := range left {
		if returnedToGate(t, rdb, b, o) {
			inGate++
		}
	}
	log("%s killed between a return's COMMIT and its gate record (caught in %d tries): %d orders left, the gate had taken back %d of them",
		victim.Name, tries, len(left), inGate)
	waitReturns(t, 8, sales...)

	finishAndVerify(t, log, survivor, sales...)
	for _, o := range left {
		if !returnedToGate(t, rdb, b, o) {
			t.Errorf("order %d of product %d, left by the killed process, is not in the gate's returned set", o.id, o.product)
		}
	}
	if still, err := ordersLeft(sales[0].db, apps.of(victim.Name), products); err != nil || len(still) > 0 {
		t.Errorf("orders the killed process ended still without their gate record: %v (%v)", still, err)
	}
	sweptBy(t, survivor)
	noErrorsLogged(t, survivor)
}
