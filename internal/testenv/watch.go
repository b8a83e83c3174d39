package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"
)

// Watch samples one product's orders in PostgreSQL and remembers when it first saw each order
// written and each ended (expired or cancelled): an order seen was committed before the
// sample's answer was read, so these are moments by which a purchase had surely taken its
// unit, and a return had surely given it back, the bounds the history check of a sale whose
// units come back needs (ReservationSale). It is safe for concurrent use.
type Watch struct {
	db      *sql.DB
	product int64

	mu             sync.Mutex
	written, ended map[int64]time.Time
}

// NewWatch returns a Watch of product's orders in db.
func NewWatch(db *sql.DB, product int64) *Watch {
	return &Watch{db: db, product: product, written: map[int64]time.Time{}, ended: map[int64]time.Time{}}
}

// Snapshot is one sample: the product's stock, its initial stock and its live orders
// (pending or paid), read in the statement that saw its orders.
type Snapshot struct {
	Stock, Initial, Live int64
}

// Sample reads the product and its orders once (one statement, one snapshot) and records
// what it saw. Its cost grows with the product's orders: a scan of them by the orders'
// product index.
func (w *Watch) Sample(ctx context.Context) (Snapshot, error) {
	var s Snapshot
	rows, err := w.db.QueryContext(ctx, `SELECT p.stock, p.initial_stock, o.id, o.status IN ('expired', 'cancelled')
		FROM products p LEFT JOIN orders o ON o.product_id = p.id WHERE p.id = $1`, w.product)
	if err != nil {
		return s, fmt.Errorf("sample product %d: %w", w.product, err)
	}
	defer rows.Close()
	found, ended := false, map[int64]bool{} // the orders seen: ended or not
	for rows.Next() {
		var id sql.NullInt64
		var gone sql.NullBool
		if err := rows.Scan(&s.Stock, &s.Initial, &id, &gone); err != nil {
			return s, fmt.Errorf("sample product %d: %w", w.product, err)
		}
		found = true
		if id.Valid {
			ended[id.Int64] = gone.Bool
			if !gone.Bool {
				s.Live++
			}
		}
	}
	if err := rows.Err(); err != nil {
		return s, fmt.Errorf("sample product %d: %w", w.product, err)
	}
	if !found {
		return s, fmt.Errorf("sample product %d: %w", w.product, sql.ErrNoRows)
	}
	w.saw(ended, time.Now())
	return s, nil
}

// saw records at as when the orders of ended were first seen, and first seen ended.
func (w *Watch) saw(ended map[int64]bool, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, gone := range ended {
		if _, ok := w.written[id]; !ok {
			w.written[id] = at
		}
		if _, ok := w.ended[id]; !ok && gone {
			w.ended[id] = at
		}
	}
}

// seen returns when order id was first seen written, and ended; zero when not seen.
func (w *Watch) seen(id int64) (written, ended time.Time) {
	if w == nil {
		return time.Time{}, time.Time{}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written[id], w.ended[id]
}
