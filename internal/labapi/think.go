package labapi

import (
	"context"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// Thinker is the order.Thinker of the lab build: it pauses for the product's think_ms, or
// until ctx ends (its cause is the error). It is safe for concurrent use.
type Thinker struct{}

// Think pauses for p.ThinkMS milliseconds, or until ctx ends.
func (Thinker) Think(ctx context.Context, p inventory.Product) error {
	if p.ThinkMS == 0 {
		return nil
	}
	t := time.NewTimer(p.Think())
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
