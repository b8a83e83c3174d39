package inventory

import (
	"errors"
	"fmt"
	"time"
)

// Errors of a purchase outside the product's sale window, held by a *WindowError.
var (
	ErrNotStarted = errors.New("inventory: sale not started")
	ErrEnded      = errors.New("inventory: sale ended")
)

// WindowError matches ErrNotStarted or ErrEnded and names the window's edge that refused.
type WindowError struct {
	Product int64
	Err     error     // ErrNotStarted or ErrEnded
	At      time.Time // the product's StartsAt (ErrNotStarted) or EndsAt (ErrEnded)
}

func (e *WindowError) Error() string {
	return fmt.Sprintf("product %d: %v (%s)", e.Product, e.Err, e.At.Format(time.RFC3339Nano))
}

// Unwrap makes a *WindowError match its Err.
func (e *WindowError) Unwrap() error { return e.Err }

// OnSale returns nil if p is on sale at now, else a *WindowError. It reads only p, so it
// costs no round trip.
func (p Product) OnSale(now time.Time) error {
	switch {
	case p.StartsAt != nil && now.Before(*p.StartsAt):
		return &WindowError{Product: p.ID, Err: ErrNotStarted, At: *p.StartsAt}
	case p.EndsAt != nil && !now.Before(*p.EndsAt):
		return &WindowError{Product: p.ID, Err: ErrEnded, At: *p.EndsAt}
	}
	return nil
}

// Upcoming reports whether p's sale starts after now.
func (p Product) Upcoming(now time.Time) bool { return p.StartsAt != nil && now.Before(*p.StartsAt) }

// OffSale reports whether product id, if cached (see Meta), is outside its sale window at now.
// It never reads PostgreSQL: an id not cached is not off sale.
func (s *Store) OffSale(id int64, now time.Time) bool {
	p, ok := s.meta.Load(id)
	return ok && p.(Product).OnSale(now) != nil
}
