package order

import (
	"context"
	"errors"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// buyNaive is the teaching control: read the stock without a lock, check it, think, then
// insert the order and write back stock = read - 1, with no conditional update. Buyers who
// read the same stock all pass the check and all write the same value: lost updates, so it
// oversells. The two writes share one transaction only so that the buyer's answer is exact;
// that does not close the race. It never marks the product sold out: its own lost updates
// can bring the stock back above zero after someone read zero.
func (s *Service) buyNaive(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	return s.readThinkWrite(ctx, p, userID, 0)
}

// readThinkWrite reads the stock (claiming the row for fence, if not 0: see
// inventory.ClaimStock), answers sold out if none is left, thinks, then inserts the order and
// writes back stock = read - 1 (with a fence, only if no newer one has touched the row). It is
// the naive strategy, and the oversell lab's purchase once its lock is held: nothing in it
// stops two buyers who read the same stock from both writing.
func (s *Service) readThinkWrite(ctx context.Context, p inventory.Product, userID int64, fence int64) (Order, error) {
	stock, err := inventory.ClaimStock(s.db.WithContext(ctx), p.ID, fence)
	if err != nil {
		return Order{}, err
	}
	if stock <= 0 {
		return Order{}, orderOrSoldOut(s.db.WithContext(ctx), p.ID, userID)
	}
	if err := think(ctx, p); err != nil {
		return Order{}, err
	}
	return s.buyInTx(ctx, p, userID, func(tx *gorm.DB) (Order, int, error) {
		o, err := insertOrder(tx, p.ID, userID)
		if err != nil {
			return Order{}, 0, err
		}
		return o, -1, inventory.SetStockFenced(tx, p.ID, stock-1, fence) // -1: never a sold-out mark
	})
}

// buyPessimistic locks the product row with SELECT ... FOR UPDATE for the whole transaction,
// think_ms included (that is the strategy): buyers of one product queue in PostgreSQL, each
// holding a connection, at most Config.ProductConns of them per process.
func (s *Service) buyPessimistic(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	return s.buyInTx(ctx, p, userID, func(tx *gorm.DB) (Order, int, error) {
		if err := s.soldOutCheck(ctx, tx, p, userID, true); err != nil {
			return Order{}, 0, err
		}
		if err := think(ctx, p); err != nil {
			return Order{}, 0, err
		}
		return s.insertAndDecrement(tx, p, userID)
	})
}

// buyOptimistic takes no lock: it reads the stock, thinks (no transaction open), then
// inserts the order and takes the unit with UPDATE ... WHERE stock >= 1, the only
// serialisation; a buyer who loses the race gets sold_out.
func (s *Service) buyOptimistic(ctx context.Context, p inventory.Product, userID int64) (Order, error) {
	if err := s.soldOutCheck(ctx, s.db.WithContext(ctx), p, userID, false); err != nil {
		return Order{}, err
	}
	if err := think(ctx, p); err != nil {
		return Order{}, err
	}
	return s.buyInTx(ctx, p, userID, func(tx *gorm.DB) (Order, int, error) {
		return s.insertAndDecrement(tx, p, userID)
	})
}

// soldOutCheck reads the product's stock in tx (locking the row with forUpdate), and marks
// it sold out when none is left: a committed zero, safe to share. The buyer is then answered
// with the order it holds, if it has one (a retry), else sold out.
func (s *Service) soldOutCheck(ctx context.Context, tx *gorm.DB, p inventory.Product, userID int64, forUpdate bool) error {
	stock, err := inventory.Stock(tx, p.ID, forUpdate)
	if err != nil {
		return err
	}
	if stock == 0 {
		s.SoldOut.Mark(ctx, p.ID)
		return orderOrSoldOut(tx, p.ID, userID)
	}
	return nil
}

// buyInTx runs one buyer's write in a transaction of its own (see runTx) while holding one
// of the product's connection slots, finds out what became of a COMMIT that got no answer,
// and marks the product sold out once a committed write left no stock. write returns the
// order, and the stock left (negative: do not mark).
func (s *Service) buyInTx(ctx context.Context, p inventory.Product, userID int64,
	write func(tx *gorm.DB) (Order, int, error),
) (Order, error) {
	release, err := s.slots.acquire(ctx, p.ID)
	if err != nil {
		return Order{}, err
	}
	defer release()
	var (
		o    Order
		left int
	)
	err = s.runTx(ctx, func(tx *gorm.DB) error {
		var err error
		o, left, err = write(tx)
		return err
	})
	if errors.Is(err, errCommitUnknown) {
		err = s.settleOrders(ctx, p.ID, []Order{o}, err)
	}
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
