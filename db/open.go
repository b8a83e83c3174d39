package db

import (
	"fmt"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// PoolOptions sizes the connection pool. The zero value means the documented defaults.
type PoolOptions struct {
	MaxOpen     int           // Default: 20.
	MaxIdle     int           // Default: MaxOpen.
	MaxLifetime time.Duration // Default: 30m.
}

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
	gdb, err := gorm.Open(postgres.Open(dsn), &gorm.Config{
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
