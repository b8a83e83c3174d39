//go:build linux

package chaos_test

import (
	"net/url"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/faultproxy"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// backend is the PostgreSQL and Redis a test's API processes run on, both the test's own: a
// schema, which the audit reads directly (never through a proxy of the test's), and a key
// prefix on a Redis server. startAPIs hands them to the processes; a test that puts a proxy
// in front of one says so in the env it passes.
type backend struct {
	dsn    string // PostgreSQL: the processes' DATABASE_URL unless their env says otherwise
	redis  string // REDIS_ADDR
	prefix string // REDIS_KEY_PREFIX
}

// sharedBackend is a schema of the shared PostgreSQL and a key prefix on the shared Redis,
// with a client of that Redis.
func sharedBackend(t *testing.T) (backend, *redis.Client) {
	t.Helper()
	return sharedRedisBackend(t, testenv.Schema(t))
}

// sharedRedisBackend is the PostgreSQL at dsn and a key prefix on the shared Redis, with a
// client of that Redis.
func sharedRedisBackend(t *testing.T, dsn string) (backend, *redis.Client) {
	t.Helper()
	rdb, prefix := testenv.Redis(t)
	return backend{dsn: dsn, redis: testenv.RedisAddr(t), prefix: prefix}, rdb
}

// ownPostgres starts a PostgreSQL cluster of the test's own (servers.StartPostgres) and
// returns it with a backend on it and a key prefix on the shared Redis, and a client of that
// Redis.
func ownPostgres(t *testing.T) (backend, *redis.Client, *servers.Postgres) {
	t.Helper()
	pg := servers.StartPostgres(t)
	b, rdb := sharedRedisBackend(t, pg.DSN())
	return b, rdb, pg
}

// ownRedis starts a redis-server of the test's own with args (servers.StartRedis) and returns
// it with a backend on it (see onRedis).
func ownRedis(t *testing.T, args ...string) (backend, *servers.Redis) {
	t.Helper()
	red := servers.StartRedis(t, args...)
	return onRedis(t, red.Addr), red
}

// onRedis is a backend of a schema of the shared PostgreSQL and a key prefix on the test's
// own Redis at addr (a server, or a cluster's nodes separated by commas).
func onRedis(t *testing.T, addr string) backend {
	t.Helper()
	return backend{dsn: testenv.Schema(t), redis: addr, prefix: testenv.Name("chaos")}
}

// keys names the Redis keys of b's products, as the API processes do.
func (b backend) keys() inventory.Keys { return inventory.Keys{Prefix: b.prefix} }

// proxyPostgres starts a fault proxy of the test's in front of b's PostgreSQL and returns it
// with b.dsn through it: the DATABASE_URL of processes that are to suffer its faults.
func (b backend) proxyPostgres(t *testing.T) (*faultproxy.Proxy, string) {
	t.Helper()
	u, err := url.Parse(b.dsn)
	if err != nil || u.Host == "" {
		t.Fatalf("DATABASE_URL must be a postgres:// URL for this test: %v", err)
	}
	px := testenv.StableProxy(t, u.Host)
	u.Host = px.Addr()
	return px, u.String()
}

// startProxiedAPIs starts n API processes on b with env (see startAPIs) whose PostgreSQL is
// reached through a fault proxy of the test's (see proxyPostgres), and returns the proxy
// with them.
func (b backend) startProxiedAPIs(t *testing.T, n int, env map[string]string) (*faultproxy.Proxy, []*apiProc) {
	t.Helper()
	px, proxied := b.proxyPostgres(t)
	return px, b.startAPIs(t, n, withEnv(env, "DATABASE_URL", proxied))
}

// withParam returns dsn with the query parameter key set to value.
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
