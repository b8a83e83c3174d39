package db

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// PoolOptions sizes the connection pool. The zero value means the documented defaults.
type PoolOptions struct {
	MaxOpen     int           // Default: 20.
	MaxIdle     int           // Default: MaxOpen.
	MaxLifetime time.Duration // Default: 30m.
	// IdleInTransactionTimeout sets idle_in_transaction_session_timeout on every connection, so that
	// PostgreSQL rolls back a transaction whose client went silent and frees its row locks
	// (docs/failures.md#silent-partitions). A DSN that sets the parameter itself wins. Default: 0,
	// PostgreSQL's own setting.
	IdleInTransactionTimeout time.Duration
	// Tracer, when set, traces every query of every connection (pgx.ConnConfig.Tracer):
	// OpenTelemetry spans (app.PostgresTracer). Default: none.
	Tracer pgx.QueryTracer
}

// idleInTx is the name of PostgreSQL's parameter that IdleInTransactionTimeout sets.
const idleInTx = "idle_in_transaction_session_timeout"

// Open connects GORM to PostgreSQL through pgx. It does not run migrations and does not
// wait for the server: callers ping when they need to know.
func Open(dsn string, o PoolOptions) (*gorm.DB, error) {
	if o.MaxOpen <= 0 {
		o.MaxOpen = 20
	}
	if o.MaxIdle <= 0 {
		o.MaxIdle = o.MaxOpen
	}
	if o.MaxLifetime <= 0 {
		o.MaxLifetime = 30 * time.Minute
	}
	var opts []stdlib.OptionOpenDB
	if o.IdleInTransactionTimeout > 0 || o.Tracer != nil {
		ms := strconv.FormatInt(max(1, o.IdleInTransactionTimeout.Milliseconds()), 10)
		// One BeforeConnect: a second OptionBeforeConnect would replace the first.
		opts = append(opts, stdlib.OptionBeforeConnect(func(_ context.Context, c *pgx.ConnConfig) error {
			if _, set := c.RuntimeParams[idleInTx]; !set && o.IdleInTransactionTimeout > 0 {
				c.RuntimeParams[idleInTx] = ms
			}
			if o.Tracer != nil {
				c.Tracer = o.Tracer
			}
			return nil
		}))
	}
	gdb, err := gorm.Open(postgres.New(postgres.Config{DSN: dsn, OptionOpenDB: opts}), &gorm.Config{
		Logger:                 logger.Discard,
		SkipDefaultTransaction: true, // every write we make is already in an explicit transaction
		DisableAutomaticPing:   true, // callers decide when to wait for the server
	})
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	sqlDB, err := gdb.DB()
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	sqlDB.SetMaxOpenConns(o.MaxOpen)
	sqlDB.SetMaxIdleConns(o.MaxIdle)
	sqlDB.SetConnMaxLifetime(o.MaxLifetime)
	return gdb, nil
}
