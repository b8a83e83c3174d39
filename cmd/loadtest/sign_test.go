package main

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seckill/seckill/internal/loadgen"
	"github.com/seckill/seckill/internal/testenv"
	"github.com/seckill/seckill/internal/testenv/servers"
)

// TestSignedSale: against two API processes with buyer identity on, whose JWKS `loadtest
// keys` made, an abandonment sale signed with -sign-key (purchases, payments, cancels and
// lookups, each with its buyer's token) pays out, audited per buyer in PostgreSQL; the
// negative controls, a run without -sign-key and one signed by another key, get every
// purchase refused 401 and fail -max-error-rate 0.
func TestSignedSale(t *testing.T) {
	dsn, redisAddr, prefix := testenv.APIBackend(t)
	t.Parallel()
	dir, other := t.TempDir(), t.TempDir()
	for _, d := range []string{dir, other} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"loadtest", "keys", "-dir", d, "-alg", "ES256"}, func(string) string { return "" }, &out, &out); err != nil {
			t.Fatalf("loadtest keys: %v: %s", err, out.String())
		}
	}
	apis := servers.StartAPIs(t, 2, map[string]string{
		"DATABASE_URL": dsn, "REDIS_ADDR": redisAddr, "REDIS_KEY_PREFIX": prefix,
		"ADMIN_TOKEN": apisToken, "LOG_LEVEL": "warn", "DB_MAX_CONNS": "10",
		"AUTH_JWKS_FILE": filepath.Join(dir, "buyer-jwks.json"), "AUTH_AUDIENCE": "seckill", "AUTH_ISSUER": "seckill-loadtest",
	})
	targets := []string{apis[0].Base, apis[1].Base}
	key := filepath.Join(dir, "buyer-signing-key.pem")
	checkAbandonment(t, targets, "database", "-strategies", "dlock", "-database-url", dsn, "-redis-addr", redisAddr,
		"-redis-prefix", prefix, "-sign-key", key)

	for name, sign := range map[string][]string{"unsigned": nil, "another key": {"-sign-key", filepath.Join(other, "buyer-signing-key.pem")}} {
		args := append([]string{"loadtest", "run", "-targets", strings.Join(targets, ","), "-strategy", "dlock", "-stock", "5",
			"-rate", "50", "-requests", "20", "-duration", "10s", "-progress", "0", "-audit", "api", "-max-error-rate", "0",
			"-json", filepath.Join(t.TempDir(), "r.json")}, sign...)
		var stdout, stderr bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := run(ctx, args, func(k string) string { return map[string]string{"ADMIN_TOKEN": apisToken}[k] }, &stdout, &stderr)
		cancel()
		rep := readReport(t, args[len(args)-len(sign)-1])
		codes := rep.Rounds[0][0].Stats.StatusCodes
		if !errors.Is(err, loadgen.ErrThresholds) || codes["401"] != 20 {
			t.Errorf("%s: run = %v, answers %v; want every purchase 401 and the error-rate threshold breached", name, err, codes)
		}
	}
}
