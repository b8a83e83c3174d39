package httpapi

import (
	"github.com/seckill/seckill/internal/api"
	"github.com/seckill/seckill/internal/inventory"
	"github.com/seckill/seckill/internal/order"
)

// The domain's values as the contract shows them: the API encodes only package api's types.

func productOf(p inventory.Product) api.Product {
	var line *api.Line
	if p.HasLine() {
		line = &api.Line{Rate: p.LineRate, WindowMS: p.LineWindowMS}
	}
	return api.Product{
		Line: line, ID: p.ID, Name: p.Name, Stock: p.Stock, InitialStock: p.InitialStock, Sold: p.Sold(),
		Strategy: string(p.Strategy), ThinkMS: p.ThinkMS, Lock: p.LabLock, LeaseMS: p.LeaseMS, Fair: p.Fair,
		PayWithinMS: p.PayWithinMS, StartsAt: p.StartsAt, EndsAt: p.EndsAt, PausedAt: p.PausedAt, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
	}
}

func orderOf(o order.Order) api.Order {
	return api.Order{ID: o.ID, ProductID: o.ProductID, UserID: o.UserID, CreatedAt: o.CreatedAt,
		Status: o.Status, PayBy: o.PayBy, PaidAt: o.PaidAt, EndedAt: o.EndedAt}
}

func auditOf(a order.Audit) api.Audit {
	out := api.Audit{
		ProductID: a.ProductID, InitialStock: a.InitialStock, Stock: a.Stock, Orders: a.Orders, Pending: a.Pending,
		Ended: a.Ended, Sold: a.Sold,
		Oversold: a.Oversold, DuplicateUsers: a.DuplicateUsers, Restocked: a.Restocked, Consistent: a.Consistent,
	}
	if g := a.Redis; g != nil {
		out.Redis = &api.GateAudit{Seeded: g.Seeded, Stock: g.Stock, Buyers: g.Buyers, Pending: g.Pending, Agrees: g.Agrees}
	}
	if q := a.Queue; q != nil {
		out.Queue = &api.QueueAudit{Seeded: q.Seeded, Stock: q.Stock, Buyers: q.Buyers, Queued: q.Queued,
			Dead: q.Dead, Agrees: q.Agrees}
	}
	return out
}
