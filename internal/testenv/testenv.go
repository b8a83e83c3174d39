// Package testenv gives tests real, isolated PostgreSQL, Redis and etcd resources.
//
// Tests read DATABASE_URL, REDIS_ADDR and ETCD_ENDPOINTS. When a variable is unset the test is
// skipped (it fails instead under SECKILL_REQUIRE_ALL=1, as in CI: see package missing); when it
// is set but the server does not answer, the test fails loudly: `make test` always sets all
// three. Every call hands out its own PostgreSQL schema (migrated from db/) and
// its own Redis key prefix, so tests can run in parallel against the same servers; tests on
// etcd keep to keys of their own the same way, named with Name.
//
// For the history check of a sale whose units come back, a Watch samples a product's orders
// during the sale and ReservationSale reads what the checker needs besides the purchases
// (watch.go, reservations.go).
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"gorm.io/gorm"

	"github.com/seckill/seckill/db"
	"github.com/seckill/seckill/internal/testenv/missing"
)

// Name returns a short random identifier, usable as a schema name or key prefix.
func Name(prefix string) string {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return prefix + hex.EncodeToString(b)
}

// DatabaseURL returns DATABASE_URL, or skips the test when it is unset.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	return required(t, "DATABASE_URL", "PostgreSQL")
}

// RedisAddr returns REDIS_ADDR, or skips the test when it is unset.
func RedisAddr(t testing.TB) string {
	t.Helper()
	return required(t, "REDIS_ADDR", "Redis")
}

// EtcdEndpoints returns the endpoints in ETCD_ENDPOINTS (comma-separated URLs, such as
// http://127.0.0.1:2379), or skips the test when it is unset.
func EtcdEndpoints(t testing.TB) []string {
	t.Helper()
	var endpoints []string
	for _, e := range strings.Split(required(t, "ETCD_ENDPOINTS", "etcd"), ",") {
		if e = strings.TrimSpace(e); e != "" {
			endpoints = append(endpoints, e)
		}
	}
	if len(endpoints) == 0 {
		t.Fatalf("ETCD_ENDPOINTS=%q names no endpoint", os.Getenv("ETCD_ENDPOINTS"))
	}
	return endpoints
}

// required returns the environment variable key, or skips the test when it is unset (see
// missing.Skip).
func required(t testing.TB, key, server string) string {
	t.Helper()
	v := os.Getenv(key)
	if v == "" {
		missing.Skipf(t, "%s is not set; run `make test` to test against a real %s", key, server)
	}
	return v
}

// Schema creates a fresh schema, migrates it, and returns a DSN whose connections use it.
// The schema is dropped when the test ends.
func Schema(t testing.TB) string {
	t.Helper()
	base := DatabaseURL(t)
	admin, err := db.Open(base, db.PoolOptions{MaxOpen: 2})
	if err != nil {
		t.Fatalf("open %s: %v", redact(base), err)
	}
	closeDB(t, admin)
	// 30 s: with every package's tests migrating schemas at once on a loaded 2-core machine,
	// a CI run's migration took more than 10 s.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	name := Name("t_")
	if err := admin.WithContext(ctx).Exec("CREATE SCHEMA " + name).Error; err != nil {
		t.Fatalf("PostgreSQL at %s is unreachable or refused CREATE SCHEMA: %v", redact(base), err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := admin.WithContext(ctx).Exec("DROP SCHEMA " + name + " CASCADE").Error; err != nil {
			t.Errorf("drop schema %s: %v", name, err)
		}
	})
	dsn, err := WithSearchPath(base, name)
	if err != nil {
		t.Fatal(err)
	}
	gdb := DB(t, dsn)
	sqlDB, _ := gdb.DB()
	if err := db.Migrate(ctx, sqlDB); err != nil {
		t.Fatalf("migrate schema %s: %v", name, err)
	}
	return dsn
}

// DB opens a pool on dsn that is closed when the test ends.
func DB(t testing.TB, dsn string) *gorm.DB {
	t.Helper()
	gdb, err := db.Open(dsn, db.PoolOptions{MaxOpen: 10})
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	closeDB(t, gdb)
	return gdb
}

// Postgres is Schema followed by DB: a pool on a fresh, migrated schema.
func Postgres(t testing.TB) *gorm.DB {
	t.Helper()
	return DB(t, Schema(t))
}

// Etcd returns a client of the etcd at endpoints, or at ETCD_ENDPOINTS when none are given
// (the test is skipped when it is unset), closed when the test ends. It does not wait for
// etcd: a test may give endpoints where nothing answers. Isolate data by key names (Name).
func Etcd(t testing.TB, endpoints ...string) *clientv3.Client {
	t.Helper()
	if len(endpoints) == 0 {
		endpoints = EtcdEndpoints(t)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 2 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("etcd client of %v: %v", endpoints, err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// Redis returns a client on REDIS_ADDR, closed when the test ends, and a key prefix of the
// test's own.
func Redis(t testing.TB) (*redis.Client, string) {
	t.Helper()
	addr := RedisAddr(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		t.Fatalf("Redis at %s is unreachable: %v", addr, err)
	}
	prefix := Name("t")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		iter := rdb.Scan(ctx, 0, prefix+":*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
		rdb.Close()
	})
	return rdb, prefix
}

// APIBackend skips the test with -short, and otherwise returns a fresh schema of
// DATABASE_URL, REDIS_ADDR and a key prefix whose keys are deleted when the test ends: the
// backend of API processes of the test's own.
func APIBackend(t testing.TB) (dsn, redisAddr, prefix string) {
	t.Helper()
	SkipShort(t, "API processes")
	_, prefix = Redis(t)
	return Schema(t), RedisAddr(t), prefix
}

// WithSearchPath returns dsn with its connections' search_path set to schema.
func WithSearchPath(dsn, schema string) (string, error) {
	if !strings.Contains(dsn, "://") {
		return dsn + " search_path=" + schema, nil
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("parse DATABASE_URL: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func closeDB(t testing.TB, gdb *gorm.DB) {
	t.Cleanup(func() {
		if sqlDB, err := gdb.DB(); err == nil {
			sqlDB.Close()
		}
	})
}

func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return "DATABASE_URL"
	}
	return u.Redacted()
}

// RevokeEtcdLock ends the lease of the one etcd lock held on key (its key under key+"/"),
// as etcd does when the holder's keep-alives stop: the holder loses the lock.
func RevokeEtcdLock(t testing.TB, ctx context.Context, cli *clientv3.Client, key string) {
	t.Helper()
	resp, err := cli.Get(ctx, key+"/", clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the lock's key in etcd: %v, %v", resp, err)
	}
	if _, err := cli.Revoke(ctx, clientv3.LeaseID(resp.Kvs[0].Lease)); err != nil {
		t.Fatalf("revoke the lease of %s: %v", key, err)
	}
}
