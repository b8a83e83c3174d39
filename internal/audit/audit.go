// Package audit reads what PostgreSQL and Redis (the redis strategy's gate, the queue
// strategy's gate and streams) hold of one product's sale, directly
// and without the service: the load tester (cmd/loadtest) and the fault tests use it to check
// the service's promises without trusting the service. The service's own view is its audit
// route (GET /api/v1/products/{id}/audit, internal/order); each figure here has the meaning
// documented there, and one definition, in this file.
package audit

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/seckill/seckill/internal/keys"
)

// Sale is one product's sale as PostgreSQL records it and, when asked, as Redis holds it: the
// gate of a redis-strategy (or any other non-queue) product, the gate and streams of a
// queue-strategy product.
type Sale struct {
	ProductID    int64 `json:"product_id"`
	InitialStock int64 `json:"initial_stock"`
	Stock        int64 `json:"stock"`
	// Orders counts the live orders (pending or paid): the units held. stock + orders ==
	// initial_stock is the equality every return keeps (an expired or cancelled order's unit
	// went back to stock).
	Orders int64 `json:"orders"`
	// Sold is initial_stock - stock: the units that left the stock.
	Sold int64 `json:"sold"`
	// Oversold is how many orders exceed the initial stock.
	Oversold int64 `json:"oversold"`
	// DuplicateUsers is how many users have more than one live order of the product.
	DuplicateUsers int64 `json:"duplicate_users"`
	// Fence is the newest lock fence that wrote the product (dlock strategy; 0 otherwise).
	Fence int64 `json:"fence"`
	// Consistent: orders == sold, stock >= 0, nothing oversold, no duplicate user, and the
	// gate (or the queue) agrees when it was read.
	Consistent bool   `json:"consistent"`
	Gate       *Gate  `json:"gate,omitempty"`
	Queue      *Queue `json:"queue,omitempty"`
}

// Gate is what the Redis gate of a product holds.
type Gate struct {
	Seeded  bool  `json:"seeded"` // the stock key exists
	Stock   int64 `json:"stock"`
	Buyers  int64 `json:"buyers"`
	Pending int64 `json:"pending"` // admissions PostgreSQL has not confirmed yet
	// Agrees: the gate's stock equals PostgreSQL's and its buyers are the orders; or nobody
	// has come yet (no gate, no order, stock untouched).
	Agrees bool `json:"agrees"`
}

// Queue is what Redis holds of a queue-strategy product (inventory.Queue): its gate and its
// streams. The fields are those of api.QueueAudit, in its order.
type Queue struct {
	Seeded bool  `json:"seeded"` // the gate's stock key exists
	Stock  int64 `json:"stock"`  // units the gate has left
	Buyers int64 `json:"buyers"` // users admitted: queued or written
	Queued int64 `json:"queued"` // XLEN of the stream: purchases admitted, not yet written
	Dead   int64 `json:"dead"`   // XLEN of the dead-letter stream: purchases never written
	// Agrees: the gate's stock is PostgreSQL's less the queued purchases, its buyers are the
	// orders plus the queued purchases, and nothing is dead-lettered; or nobody has come yet
	// (not seeded, no order, stock untouched).
	Agrees bool `json:"agrees"`
}

// Auditor reads PostgreSQL and Redis directly. It is safe for concurrent use.
type Auditor struct {
	query func(ctx context.Context, query string, args ...any) (Rows, error)
	rdb   redis.UniversalClient
	keys  keys.Keys
}

// Rows is the answer to one of the Auditor's statements, row by row: a *sql.Rows.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close() error
}

// Querier runs the Auditor's statements (placeholders $1, $2, ...): a *sql.DB for the tools,
// which link no gorm, or the service's adapter of its gorm pool (internal/app).
type Querier[R Rows] interface {
	QueryContext(ctx context.Context, query string, args ...any) (R, error)
}

// New returns an Auditor of the products in db whose gates live in rdb under keys. A nil rdb
// audits PostgreSQL only.
func New[R Rows](db Querier[R], rdb redis.UniversalClient, k keys.Keys) *Auditor {
	query := func(ctx context.Context, q string, args ...any) (Rows, error) {
		rows, err := db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		return rows, nil
	}
	return &Auditor{query: query, rdb: rdb, keys: k}
}

// ErrNoProduct is Sale's error for a product PostgreSQL does not have.
var ErrNoProduct = errors.New("audit: no such product")

const saleQuery = `
SELECT p.initial_stock, p.stock, p.fence, p.strategy,
       (SELECT count(*) FROM orders o WHERE o.product_id = p.id AND o.status IN ('pending', 'paid')),
       (SELECT count(*) FROM (SELECT 1 FROM orders o WHERE o.product_id = p.id AND o.status IN ('pending', 'paid')
                              GROUP BY o.user_id HAVING count(*) > 1) d)
  FROM products p
 WHERE p.id = $1`

// Sale audits product id in PostgreSQL and, with gate (and a Redis client), Redis: the
// queue (Sale.Queue) of a queue-strategy product, the gate (Sale.Gate) of any other.
func (a *Auditor) Sale(ctx context.Context, id int64, gate bool) (Sale, error) {
	s := Sale{ProductID: id}
	var strategy string
	err := a.queryRow(ctx, saleQuery, []any{id}, &s.InitialStock, &s.Stock, &s.Fence, &strategy, &s.Orders, &s.DuplicateUsers)
	if err != nil {
		return Sale{}, fmt.Errorf("audit product %d in PostgreSQL: %w", id, err)
	}
	s.Sold = s.InitialStock - s.Stock
	s.Oversold = max(0, s.Orders-s.InitialStock)
	s.Consistent = s.Orders == s.Sold && s.Stock >= 0 && s.Oversold == 0 && s.DuplicateUsers == 0
	if gate && a.rdb != nil && strategy == "queue" {
		q, err := a.queue(ctx, s)
		if err != nil {
			return Sale{}, err
		}
		s.Queue = &q
		s.Consistent = s.Consistent && q.Agrees
	} else if gate && a.rdb != nil {
		g, err := a.gate(ctx, s)
		if err != nil {
			return Sale{}, err
		}
		s.Gate = &g
		s.Consistent = s.Consistent && g.Agrees
	}
	return s, nil
}

// gate reads the gate of s's product and compares it with s.
func (a *Auditor) gate(ctx context.Context, s Sale) (Gate, error) {
	stock := a.rdb.Get(ctx, a.keys.GateStock(s.ProductID))
	buyers := a.rdb.SCard(ctx, a.keys.GateBuyers(s.ProductID))
	pending := a.rdb.HLen(ctx, a.keys.GatePending(s.ProductID))
	var g Gate
	for _, err := range []error{buyers.Err(), pending.Err()} {
		if err != nil {
			return Gate{}, fmt.Errorf("audit the gate of product %d: %w", s.ProductID, err)
		}
	}
	g.Buyers, g.Pending = buyers.Val(), pending.Val()
	switch n, err := stock.Int64(); {
	case errors.Is(err, redis.Nil):
	case err != nil:
		return Gate{}, fmt.Errorf("audit the gate of product %d: %w", s.ProductID, err)
	default:
		g.Seeded, g.Stock = true, n
	}
	untouched := !g.Seeded && s.Orders == 0 && s.Stock == s.InitialStock
	g.Agrees = untouched || g.Seeded && g.Stock == s.Stock && g.Buyers == s.Orders
	return g, nil
}

// queue reads the gate and streams of s's queue product and compares them with s.
func (a *Auditor) queue(ctx context.Context, s Sale) (Queue, error) {
	id := s.ProductID
	pipe := a.rdb.Pipeline()
	stock := pipe.Get(ctx, a.keys.GateStock(id))
	buyers := pipe.SCard(ctx, a.keys.GateBuyers(id))
	queued := pipe.XLen(ctx, a.keys.QueueStream(id))
	dead := pipe.XLen(ctx, a.keys.QueueDead(id))
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return Queue{}, fmt.Errorf("audit the queue of product %d: %w", id, err)
	}
	q := Queue{Buyers: buyers.Val(), Queued: queued.Val(), Dead: dead.Val()}
	if n, err := stock.Int64(); err == nil {
		q.Seeded, q.Stock = true, n
	}
	untouched := !q.Seeded && s.Orders == 0 && s.Stock == s.InitialStock
	q.Agrees = untouched || q.Seeded && q.Stock == s.Stock-q.Queued && q.Buyers == s.Orders+q.Queued && q.Dead == 0
	return q, nil
}

// Buyers returns the users who have an order of product id.
func (a *Auditor) Buyers(ctx context.Context, id int64) (map[int64]bool, error) {
	orders, err := a.Orders(ctx, id)
	if err != nil {
		return nil, err
	}
	buyers := make(map[int64]bool, len(orders))
	for u := range orders {
		buyers[u] = true
	}
	return buyers, nil
}

// Orders returns the order id of each user who has a live order (pending or paid) of product
// id: an expired or cancelled reservation gave its unit back.
func (a *Auditor) Orders(ctx context.Context, id int64) (map[int64]int64, error) {
	rows, err := a.query(ctx, `SELECT user_id, id FROM orders WHERE product_id = $1 AND status IN ('pending', 'paid')`, id)
	if err != nil {
		return nil, fmt.Errorf("orders of product %d: %w", id, err)
	}
	defer rows.Close()
	orders := map[int64]int64{}
	for rows.Next() {
		var u, o int64
		if err := rows.Scan(&u, &o); err != nil {
			return nil, fmt.Errorf("orders of product %d: %w", id, err)
		}
		orders[u] = o
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("orders of product %d: %w", id, err)
	}
	return orders, nil
}

// queryRow runs query with args and scans its first row into dest; no row is ErrNoProduct.
func (a *Auditor) queryRow(ctx context.Context, query string, args []any, dest ...any) error {
	rows, err := a.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return err
		}
		return ErrNoProduct
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	return rows.Close()
}
