package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/api/client"
	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// cacheDescribe is what the API's DATABASE_URL to a PgBouncer adds: pgx then prepares no
// named statement, which a transaction pool would hand to other clients' transactions.
const cacheDescribe = "&default_query_exec_mode=cache_describe"

// pgBouncerSettings is deploy/pgbouncer/seckill.ini, what the service needs of a PgBouncer.
func pgBouncerSettings(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "pgbouncer", "seckill.ini"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// pooledAPIs starts n API processes whose PostgreSQL is pgb's pool, with dbURLExtra added to
// its URL, each with a pool of DB_MAX_CONNS 5, of which one product's purchases hold at most
// 2. The schema was migrated on PostgreSQL itself: goose's session lock does not hold through
// a transaction pool (internal/testenv/servers TestPgBouncerSessionLock).
func pooledAPIs(t *testing.T, n int, pgb *servers.PgBouncer, dbURLExtra, prefix string) ([]*servers.API, []string) {
	t.Helper()
	apis := servers.StartAPIs(t, n, map[string]string{
		"DATABASE_URL": pgb.DSN("") + dbURLExtra, "MIGRATE_ON_START": "false",
		"REDIS_ADDR": testenv.RedisAddr(t), "REDIS_KEY_PREFIX": prefix, "ADMIN_TOKEN": apisToken,
		"LOG_LEVEL": "warn", "DB_MAX_CONNS": "5", "RATE_LIMIT_USER": "off",
	})
	var targets []string
	for _, a := range apis {
		targets = append(targets, a.Base)
	}
	return apis, targets
}

// crowdPool is PgBouncer's pool for pooledAPIs' three processes: one more server connection
// than one product's buyers can hold (3 x 2), so that the sold-out mark's read finds one.
const crowdPool = 3*2 + 1

// TestTopologyPgBouncer: three API processes behind a PgBouncer in transaction pooling mode
// with deploy/pgbouncer/seckill.ini's settings and a pool of crowdPool (15 client connections
// over 7 server connections), their URL with default_query_exec_mode cache_describe. Every
// strategy sells (compare, audited from PostgreSQL itself), then dlock and queue run an
// abandonment sale (reservations paid, cancelled and expired by the sweepers, units sold
// again): every audit holds, no answer is an error, no process logs one, and every sold-out
// mark is made.
func TestTopologyPgBouncer(t *testing.T) {
	dsn, redisAddr, prefix := testenv.APIBackend(t)
	t.Parallel()
	pgb := servers.StartPgBouncer(t, dsn, servers.PgBouncerOptions{PoolSize: crowdPool, Settings: pgBouncerSettings(t)})
	apis, targets := pooledAPIs(t, 3, pgb, cacheDescribe, prefix)
	rep := compareOn(t, apisToken, targets, dsn, "-baseline=false", "-redis-addr", redisAddr, "-redis-prefix", prefix)
	checkRounds(t, rep, loadgen.Strategies)
	for _, r := range rep.Rounds[0] {
		for _, o := range []loadgen.Outcome{loadgen.Unavailable, loadgen.OutcomeUnknown, loadgen.ServerError} {
			if n := r.Stats.Outcomes[o]; n > 0 {
				t.Errorf("%s: %d answers %s", r.Name, n, o)
			}
		}
		if n := r.Stats.Outcomes[loadgen.TransportError]; n > 0 { // slowness, not an error of the pool
			t.Logf("%s: %d requests cut by the client's timeout", r.Name, n)
		}
	}
	checkAbandonment(t, targets, "database", "-strategies", "dlock,queue",
		"-database-url", dsn, "-redis-addr", redisAddr, "-redis-prefix", prefix)
	for _, a := range apis {
		if lines := a.ErrorLines(); len(lines) > 0 {
			t.Errorf("%s logged %d errors, such as %s", a.Name, len(lines), lines[0])
		}
		if n := strings.Count(a.Log.String(), markNotMade); n > 0 {
			t.Errorf("%s logged %q %d times", a.Name, markNotMade, n)
		}
	}
}

// markNotMade is what an API logs when a sold-out mark could not read the stock.
const markNotMade = "sold-out mark not made"

// TestPgBouncerPoolBelowTheCrowd: with a PgBouncer pool of 4, fewer server connections than
// the 6 one product's buyers hold in three processes, a pessimistic sale's crowd takes them
// all: the sold-out mark's read, on a connection the API keeps for it, waits for one in
// PgBouncer's queue past its deadline, and the marks are not made.
func TestPgBouncerPoolBelowTheCrowd(t *testing.T) {
	dsn, redisAddr, prefix := testenv.APIBackend(t)
	t.Parallel()
	pgb := servers.StartPgBouncer(t, dsn, servers.PgBouncerOptions{PoolSize: 4, Settings: pgBouncerSettings(t)})
	apis, targets := pooledAPIs(t, 3, pgb, cacheDescribe, prefix)
	compareOn(t, apisToken, targets, dsn, "-baseline=false", "-strategies", "pessimistic", "-redis-addr", redisAddr, "-redis-prefix", prefix)
	n := 0
	for _, a := range apis {
		n += strings.Count(a.Log.String(), markNotMade)
	}
	if n == 0 {
		t.Fatalf("no API logged %q with a pool of 4 under a crowd of 6", markNotMade)
	}
	t.Logf("%q logged %d times", markNotMade, n)
}

// TestPgBouncerNeedsCacheDescribe is the control of TestTopologyPgBouncer: with pgx's default
// (named prepared statements, cached per connection), an API behind the same PgBouncer answers
// purchases 500 internal, the statements it prepared on one server connection being unknown to,
// or already on, the next.
func TestPgBouncerNeedsCacheDescribe(t *testing.T) {
	dsn, _, prefix := testenv.APIBackend(t)
	t.Parallel()
	pgb := servers.StartPgBouncer(t, dsn, servers.PgBouncerOptions{PoolSize: 4, Settings: pgBouncerSettings(t)})
	apis, targets := pooledAPIs(t, 1, pgb, "", prefix)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := client.New(targets[0], &client.Options{AdminToken: apisToken})
	answers := map[string]int{}
	for round := int64(0); round < 10 && answers["500 "+api.CodeInternal] == 0; round++ {
		p, err := admin.CreateProduct(ctx, api.NewProduct{Name: "pooled", Stock: new(20), Strategy: "pessimistic"})
		if err != nil {
			answers[answerKey(err)]++
			continue
		}
		for k, n := range buyAll(ctx, targets, p.ID, 1, 40, 0) {
			answers[k] += n
		}
	}
	t.Logf("answers: %v", answers)
	log := strings.Join(apis[0].ErrorLines(), "\n")
	if answers["500 "+api.CodeInternal] == 0 || !strings.Contains(log, "prepared statement") {
		t.Fatalf("answers %v and error log %q: want 500 internal, the log naming a prepared statement", answers, log)
	}
}
