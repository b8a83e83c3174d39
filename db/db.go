// Package db holds the schema of seckill as plain SQL migrations and applies them with goose.
//
// The SQL files in migrations/ are the single source of truth for the schema: nothing in the
// application creates or alters tables any other way. The package also opens the pool the
// service reaches PostgreSQL through (Open) and holds the one seam from it to pgx (Conn).
package db

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"hash/fnv"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var embedded embed.FS

// Migrations returns the embedded migration files.
func Migrations() fs.FS {
	sub, err := fs.Sub(embedded, "migrations")
	if err != nil {
		panic(err) // the embed pattern above guarantees the folder exists
	}
	return sub
}

// Migrate applies every pending migration to the current schema of the database behind
// sqlDB. It takes a PostgreSQL advisory lock for that schema first, so several API processes
// starting at once apply each migration once, while other schemas (tests) migrate in
// parallel. It is safe to call on an up-to-date database: it then does nothing.
func Migrate(ctx context.Context, sqlDB *sql.DB) error {
	var schema string
	if err := sqlDB.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	h := fnv.New64a()
	h.Write([]byte("seckill migrations " + schema))
	locker, err := lock.NewPostgresSessionLocker(
		lock.WithLockID(int64(h.Sum64()>>1)),
		lock.WithLockTimeout(1, 120), // retry every second for two minutes
	)
	if err != nil {
		return fmt.Errorf("migration locker: %w", err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, Migrations(),
		goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("migration provider: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("apply migrations: %w", err)
	}
	return nil
}
