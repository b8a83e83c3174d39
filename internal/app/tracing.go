package app

import (
	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/seckill/seckill/internal/tracing"
)

// traceRedis adds a span per command (and per pipeline) to cfg.Redis and cfg.LockNodes,
// when cfg's tracer provider records: redisotel, without the caller's file and line (a
// stack walk per command).
func traceRedis(cfg Config) {
	if !tracing.Enabled(cfg.TracerProvider) {
		return
	}
	opts := []redisotel.TracingOption{redisotel.WithTracerProvider(cfg.TracerProvider), redisotel.WithCallerEnabled(false)}
	for _, c := range append([]redis.UniversalClient{cfg.Redis}, cfg.LockNodes...) {
		// It fails only for a client type it does not know; every client cmd/api makes is
		// one it knows (Client, ClusterClient, Ring).
		_ = redisotel.InstrumentTracing(c, opts...)
	}
}

// PostgresTracer is the pgx tracer that gives each PostgreSQL query, batch and connection a
// span on tp (otelpgx), to set on the pool that Config.DB opens (db.PoolOptions.Tracer); nil
// when tp does not record, so that tracing off costs nothing.
func PostgresTracer(tp trace.TracerProvider) pgx.QueryTracer {
	if !tracing.Enabled(tp) {
		return nil
	}
	return otelpgx.NewTracer(otelpgx.WithTracerProvider(tp))
}
