package order

import (
	"context"
	"fmt"

	"github.com/seckill/seckill/internal/inventory"
)

// Audit is a product's sale as PostgreSQL and the Redis gate record it.
type Audit struct {
	ProductID      int64
	InitialStock   int
	Stock          int
	Orders         int // live orders (pending or paid): the units held
	Pending        int // of which pending: reserved, not paid yet
	Ended          int // expired or cancelled orders, whose units went back to stock
	Sold           int // initial_stock - stock
	Oversold       int // orders beyond initial_stock
	DuplicateUsers int // users with more than one live order
	Restocked      int // units restocks added: initial_stock counts them (Restock)
	// Consistent: orders == sold, stock >= 0, no oversale or duplicate user, Redis agrees.
	Consistent bool
	Redis      *GateAudit
	Queue      *QueueAudit
}

// QueueAudit compares a queue product's Redis side, queued purchases counted, with PostgreSQL.
type QueueAudit struct {
	inventory.QueueState
	Agrees bool
}

// GateAudit compares the Redis gate's stock and buyers with PostgreSQL.
type GateAudit struct {
	inventory.GateState
	Agrees bool
}

// Audit computes the audit of product id.
func (s *Service) Audit(ctx context.Context, id int64) (Audit, error) {
	p, err := s.c.products.Get(ctx, id)
	if err != nil {
		return Audit{}, classify(err)
	}
	a := Audit{ProductID: id, InitialStock: p.InitialStock}
	err = s.c.db.WithContext(ctx).Raw(`SELECT
		(SELECT initial_stock FROM products WHERE id = @id) AS initial_stock, -- one snapshot with the rest: a restock moves both
		(SELECT stock FROM products WHERE id = @id) AS stock,
		(SELECT count(*) FROM orders WHERE product_id = @id AND `+liveStatus+`) AS orders,
		(SELECT count(*) FROM orders WHERE product_id = @id AND status = 'pending') AS pending,
		(SELECT count(*) FROM orders WHERE product_id = @id AND status IN ('expired', 'cancelled')) AS ended,
		(SELECT count(*) FROM (SELECT user_id FROM orders WHERE product_id = @id AND `+liveStatus+`
			GROUP BY user_id HAVING count(*) > 1) d) AS duplicate_users,
		(SELECT COALESCE(sum(units), 0) FROM restocks WHERE product_id = @id) AS restocked`,
		map[string]any{"id": id}).Row().Scan(&a.InitialStock, &a.Stock, &a.Orders, &a.Pending, &a.Ended, &a.DuplicateUsers, &a.Restocked)
	if err != nil {
		return Audit{}, classify(fmt.Errorf("audit product %d: %w", id, err))
	}
	a.Sold = a.InitialStock - a.Stock
	a.Oversold = max(0, a.Orders-a.InitialStock)
	a.Consistent = a.Orders == a.Sold && a.Stock >= 0 && a.Oversold == 0 && a.DuplicateUsers == 0
	if p.Strategy == inventory.StrategyRedis {
		g, err := s.gate.State(ctx, id)
		if err != nil {
			return Audit{}, classify(err)
		}
		untouched := !g.Seeded && a.Orders == 0 && a.Stock == a.InitialStock // no buyer came yet
		agrees := untouched || g.Seeded && g.Stock == int64(a.Stock) && g.Buyers == int64(a.Orders)
		a.Redis = &GateAudit{GateState: g, Agrees: agrees}
		a.Consistent = a.Consistent && agrees
	}
	if p.Strategy == inventory.StrategyQueue {
		q, err := s.queue.State(ctx, id)
		if err != nil {
			return Audit{}, classify(err)
		}
		untouched := !q.Seeded && a.Orders == 0 && a.Stock == a.InitialStock
		agrees := untouched || q.Seeded && q.Stock == int64(a.Stock)-q.Queued &&
			q.Buyers == int64(a.Orders)+q.Queued && q.Dead == 0
		a.Queue = &QueueAudit{QueueState: q, Agrees: agrees}
		a.Consistent = a.Consistent && agrees
	}
	return a, nil
}
