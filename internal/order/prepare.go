package order

import (
	"context"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// Prepare readies a product whose sale starts later, so its first buyers wait for nothing:
// it seeds the Redis gate of a redis or queue product (docs/strategies.md#the-sale-window).
// Its error is Redis's or PostgreSQL's; a buyer seeds the gate then.
func (s *Service) Prepare(ctx context.Context, p inventory.Product) error {
	if !p.Upcoming(time.Now()) {
		return nil
	}
	switch p.Strategy {
	case inventory.StrategyRedis, inventory.StrategyQueue:
		return s.seeder.seedGate(ctx, p.ID, inventory.SeedInit)
	}
	return nil
}
