package db

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"gorm.io/gorm"
)

// Conn is one connection held out of the pool that Open made, for the work that talks to
// PostgreSQL through pgx itself: the hot path's pipelined transactions (internal/order) and
// the sold-out marks' reserved connection (internal/inventory). It is the one seam between
// gorm and pgx (docs/architecture.md#reaching-postgresql). It is not safe for concurrent use.
type Conn struct {
	c *sql.Conn
}

// Hold takes a connection from gdb's pool, waiting for one under ctx.
func Hold(ctx context.Context, gdb *gorm.DB) (*Conn, error) {
	pool, err := gdb.DB()
	if err != nil {
		return nil, err
	}
	c, err := pool.Conn(ctx)
	if err != nil {
		return nil, err
	}
	return &Conn{c: c}, nil
}

// Pgx calls f with the connection as pgx's, which f must not keep, and returns f's error. It
// fails without calling f if the pool's driver is not pgx's.
func (c *Conn) Pgx(f func(*pgx.Conn) error) error {
	return c.c.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("driver connection is %T, not pgx's", dc)
		}
		return f(sc.Conn())
	})
}

// Close gives the connection back to the pool, which drops it if pgx closed it (a cancelled
// or broken statement).
func (c *Conn) Close() error { return c.c.Close() }
