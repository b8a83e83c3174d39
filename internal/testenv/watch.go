package testenv

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
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

// Sample reads the product once (one statement, one snapshot) and records what it saw. Its
// cost grows with the product's orders: a scan of them by the orders' product index.
func (w *Watch) Sample(ctx context.Context) (Snapshot, error) {
	var s Snapshot
	var ids string
	err := w.db.QueryRowContext(ctx, `SELECT p.stock, p.initial_stock,
		(SELECT count(*) FROM orders o WHERE o.product_id = p.id AND o.status IN ('pending', 'paid')),
		(SELECT coalesce(string_agg(o.id || CASE WHEN o.status IN ('expired', 'cancelled') THEN 'e' ELSE '' END, ','), '')
			FROM orders o WHERE o.product_id = p.id)
		FROM products p WHERE p.id = $1`, w.product).Scan(&s.Stock, &s.Initial, &s.Live, &ids)
	if err != nil {
		return s, fmt.Errorf("sample product %d: %w", w.product, err)
	}
	w.saw(ids, time.Now())
	return s, nil
}

// saw records at as when the orders of ids were first seen: "id" written, "ide" ended too.
func (w *Watch) saw(ids string, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range strings.Split(ids, ",") {
		id, err := strconv.ParseInt(strings.TrimSuffix(f, "e"), 10, 64)
		if err != nil {
			continue
		}
		if _, ok := w.written[id]; !ok {
			w.written[id] = at
		}
		if _, ok := w.ended[id]; !ok && strings.HasSuffix(f, "e") {
			w.ended[id] = at
		}
	}
}

// Run samples every interval until ctx ends, calling each (if not nil) with every sample or
// its error (PostgreSQL down, say: the next sample tries again).
func (w *Watch) Run(ctx context.Context, every time.Duration, each func(Snapshot, error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		s, err := w.Sample(sctx)
		cancel()
		if each != nil && ctx.Err() == nil {
			each(s, err)
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
