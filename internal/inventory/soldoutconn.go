package inventory

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"github.com/seckill/seckill/db"
)

// markConn is the one connection of the pool on which a process's sold-out marks read the stock,
// kept so that a crowd holding every other connection cannot keep a mark from being made
// (docs/strategies.md#lifting-a-sold-out-mark). It is safe for concurrent use; marks take turns on
// it.
type markConn struct {
	db   *gorm.DB
	mu   sync.Mutex
	conn *db.Conn // nil: not taken yet, or dropped after an error
}

// reserve takes the connection, if it is not held yet.
func (m *markConn) reserve(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.take(ctx)
}

func (m *markConn) take(ctx context.Context) error {
	if m.conn != nil {
		return nil
	}
	c, err := db.Hold(ctx, m.db)
	if err != nil {
		return fmt.Errorf("reserve a connection for sold-out marks: %w", err)
	}
	m.conn = c
	return nil
}

// stock reads product id's stock on the connection, taking it again if it was dropped.
func (m *markConn) stock(ctx context.Context, id int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.take(ctx); err != nil {
		return 0, err
	}
	var stock int
	err := m.conn.Pgx(func(c *pgx.Conn) error {
		return c.QueryRow(ctx, `SELECT stock FROM products WHERE id = $1`, id).Scan(&stock)
	})
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return 0, fmt.Errorf("product %d: %w", id, ErrNotFound)
	case err != nil:
		m.conn.Close() // a broken or cancelled connection: the next mark takes another
		m.conn = nil
		return 0, fmt.Errorf("read stock of product %d: %w", id, err)
	}
	return stock, nil
}

// release gives the connection back to the pool.
func (m *markConn) release() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conn != nil {
		m.conn.Close()
		m.conn = nil
	}
}
