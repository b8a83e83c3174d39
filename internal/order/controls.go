package order

import (
	"context"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// ControlObserver counts the merchant's controls, if the Service's Observer implements it:
// action is one of the Control* names, units the units a restock added (0 otherwise).
type ControlObserver interface {
	Controlled(action string, units int)
}

// The merchant's controls, as ControlObserver and the audit log name them.
const (
	ControlPause         = "pause"
	ControlResume        = "resume"
	ControlEnd           = "end"
	ControlRestock       = "restock"
	ControlRestockReplay = "restock_replay" // a restock's key sent again: nothing added
)

// Pause pauses product id's sale: purchases that have not passed the check yet are refused
// (inventory.ErrPaused) in every process within inventory.ControlLease; those past it finish.
// Errors: inventory.ErrNotFound, ErrUnavailable.
func (s *Service) Pause(ctx context.Context, id int64) (inventory.Product, error) {
	return s.control(ctx, ControlPause, id, s.c.products.Pause)
}

// Resume resumes product id's sale. Errors: inventory.ErrNotFound, ErrUnavailable.
func (s *Service) Resume(ctx context.Context, id int64) (inventory.Product, error) {
	return s.control(ctx, ControlResume, id, s.c.products.Resume)
}

// End ends product id's sale now, or keeps an earlier end. Errors: inventory.ErrNotFound, a
// *inventory.WindowError (a sale that has not started), ErrUnavailable.
func (s *Service) End(ctx context.Context, id int64) (inventory.Product, error) {
	return s.control(ctx, ControlEnd, id, func(ctx context.Context, id int64) (inventory.Product, error) {
		return s.c.products.End(ctx, id, time.Now())
	})
}

// control runs one control of product id, counts it and writes its audit log line.
func (s *Service) control(ctx context.Context, action string, id int64,
	do func(context.Context, int64) (inventory.Product, error)) (inventory.Product, error) {
	p, err := do(ctx, id)
	if err != nil {
		return inventory.Product{}, classify(err)
	}
	s.controlled(ctx, action, id, 0, "paused_at", p.PausedAt, "ends_at", p.EndsAt)
	return p, nil
}

// controlled counts a control and writes its audit log line, one per control that changed
// (or answered) a sale.
func (s *Service) controlled(ctx context.Context, action string, id int64, units int, attrs ...any) {
	if o, ok := s.c.observer.(ControlObserver); ok {
		o.Controlled(action, units)
	}
	s.c.log.InfoContext(ctx, "sale control", append([]any{"audit", true, "action", action, "product_id", id}, attrs...)...)
}
