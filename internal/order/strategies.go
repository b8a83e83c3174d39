package order

import (
	"context"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// buyNaive is the teaching control: read the stock, check it, insert the order and write
// back stock = read - 1, with no lock, no transaction and no conditional update. Buyers that
// read the same stock all pass the check and all write the same value: it oversells.
func (s *Service) buyNaive(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	tx := s.db.WithContext(ctx)
	stock, err := inventory.Stock(tx, p.ID, false)
	if err != nil {
		return Order{}, err
	}
	if stock == 0 {
		s.SoldOut.Mark(ctx, p.ID)
		return Order{}, inventory.ErrSoldOut
	}
	if err := think(ctx, p); err != nil {
		return Order{}, err
	}
	o, err := insertOrder(tx, p.ID, userID)
	if err != nil {
		return Order{}, err
	}
	if err := inventory.SetStock(tx, p.ID, stock-1); err != nil {
		return Order{}, err
	}
	s.soldOutIfZero(ctx, p.ID, stock-1)
	return o, nil
}

// buyPessimistic locks the product row with SELECT ... FOR UPDATE for the whole
// transaction: buyers of one product queue in PostgreSQL.
func (s *Service) buyPessimistic(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	return s.inTx(ctx, p, func(tx *gorm.DB) (Order, int, error) {
		if err := s.recheck(ctx, tx, p, true); err != nil {
			return Order{}, 0, err
		}
		return s.insertAndDecrement(tx, p, userID)
	})
}

// buyOptimistic takes no lock: the conditional UPDATE ... WHERE stock > 0 is the only
// serialisation, and a buyer who loses the race gets sold_out.
func (s *Service) buyOptimistic(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	return s.inTx(ctx, p, func(tx *gorm.DB) (Order, int, error) {
		if err := s.recheck(ctx, tx, p, false); err != nil {
			return Order{}, 0, err
		}
		return s.insertAndDecrement(tx, p, userID)
	})
}

// inTx runs write in one transaction and, once it has committed, marks the product sold out
// if write left no stock.
func (s *Service) inTx(ctx context.Context, p inventory.Product, write func(tx *gorm.DB) (Order, int, error)) (Order, error) {
	var (
		o    Order
		left int
	)
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var err error
		o, left, err = write(tx)
		return err
	})
	if err != nil {
		return Order{}, err
	}
	s.soldOutIfZero(ctx, p.ID, left)
	return o, nil
}

// insertAndDecrement inserts the order, then takes one unit conditionally.
func (s *Service) insertAndDecrement(tx *gorm.DB, p inventory.Product, userID int64) (Order, int, error) {
	o, err := insertOrder(tx, p.ID, userID)
	if err != nil {
		return Order{}, 0, err
	}
	left, err := inventory.Decrement(tx, p.ID, 1)
	return o, left, err
}
