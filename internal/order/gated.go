package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// buyGated is the redis strategy: an atomic Lua gate in Redis admits at most stock distinct
// buyers, so PostgreSQL only ever sees buyers who will get a unit. The admitted buyer's order
// and decrement are then written to PostgreSQL in one transaction; if that fails, the unit
// goes back to the gate, and once it commits the gate confirms the buyer (which repairs a
// gate re-seeded while the purchase was in flight).
func (s *Service) buyGated(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	if err := s.admit(ctx, p, userID); err != nil {
		return Order{}, err
	}
	o, err := s.inTx(ctx, p, func(tx *gorm.DB) (Order, int, error) {
		if err := think(ctx, p); err != nil {
			return Order{}, 0, err
		}
		return s.insertAndDecrement(tx, p, userID)
	})
	if err != nil {
		s.undoAdmit(ctx, p.ID, userID, err)
		return Order{}, err
	}
	if err := s.Gate.Confirm(context.WithoutCancel(ctx), p.ID, userID); err != nil {
		s.Logger.Error("gate and PostgreSQL disagree until the gate is reseeded",
			"product_id", p.ID, "user_id", userID, "err", err)
	}
	return o, nil
}

// admit passes the buyer through the gate, seeding the gate from PostgreSQL first when it
// is missing (a new product, or Redis lost its data).
func (s *Service) admit(ctx context.Context, p inventory.Product, userID int64) error {
	err := s.Gate.Admit(ctx, p.ID, userID)
	if errors.Is(err, inventory.ErrGateNotSeeded) {
		if err := s.seedGate(ctx, p.ID, s.Gate.Seed); err != nil {
			return err
		}
		err = s.Gate.Admit(ctx, p.ID, userID)
	}
	if errors.Is(err, inventory.ErrAlreadyAdmitted) {
		return fmt.Errorf("%w: %w", ErrAlreadyPurchased, err)
	}
	return err
}

// seedGate loads the gate of a product from PostgreSQL, its stock and its buyers, with
// write: Gate.Seed or Gate.Sync.
func (s *Service) seedGate(ctx context.Context, id int64,
	write func(ctx context.Context, id int64, stock int, buyers []int64) error,
) error {
	var (
		stock  int
		buyers []int64
	)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		if stock, err = inventory.Stock(tx, id, false); err != nil {
			return err
		}
		return tx.Model(&Order{}).Where("product_id = ?", id).Pluck("user_id", &buyers).Error
	}, repeatableRead)
	if err != nil {
		return fmt.Errorf("seed gate of product %d: %w", id, err)
	}
	return write(ctx, id, stock, buyers)
}

// undoAdmit gives an admitted buyer's unit back after the PostgreSQL write failed with
// cause. If PostgreSQL says the product is sold out, the gate admitted one buyer too many:
// it was re-seeded while purchases were in flight and counted their units as free, and
// left those buyers out. Stock 0 is final, so the gate is then synced from PostgreSQL
// exactly. It runs even when ctx is cancelled: a unit must not stay taken by a buyer who
// has no order.
func (s *Service) undoAdmit(ctx context.Context, id, userID int64, cause error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	var err error
	switch {
	case errors.Is(cause, inventory.ErrSoldOut):
		err = s.seedGate(ctx, id, s.Gate.Sync)
	case errors.Is(cause, ErrAlreadyPurchased):
		// PostgreSQL has this buyer's order, so the admission stands for it: the gate lost
		// track of the buyer when it was reseeded while their purchase was in flight, and
		// counted their unit as still free; taking it now makes the two agree again.
		return
	default:
		err = s.Gate.GiveBack(ctx, id, userID)
	}
	if err != nil {
		s.Logger.Error("gate and PostgreSQL disagree until the gate is reseeded",
			"product_id", id, "user_id", userID, "cause", cause, "err", err)
	}
}
