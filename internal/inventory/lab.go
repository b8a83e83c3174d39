package inventory

import (
	"fmt"

	"gorm.io/gorm"
)

// The oversell lab's reads and writes (StrategyLab, docs/lab.md): a plain read and an
// unconditional write of the stock, so that the lab's lock alone guards it; with a fence,
// both check it.

// ClaimStock reads a lab product's stock for a lock holder. With fence > 0 it first records
// fence on the row, unless a newer one is there (ErrFenced): from then on, a holder with an
// older fence can no longer write, even one that read the same stock before it. That is the
// fencing token checked by the storage on every access; a fence checked only on the write
// would let an older holder's write land between a newer holder's read and its write.
func ClaimStock(tx *gorm.DB, id int64, fence int64) (int, error) {
	if fence == 0 {
		return Stock(tx, id, false)
	}
	var stock []int
	err := tx.Raw(`UPDATE products SET fence = ? WHERE id = ? AND fence <= ? RETURNING stock`,
		fence, id, fence).Scan(&stock).Error
	if err != nil {
		return 0, fmt.Errorf("claim product %d: %w", id, err)
	}
	if len(stock) == 0 {
		return 0, WhyNotWritten(tx, id, fence)
	}
	return stock[0], nil
}

// SetStockFenced is SetStock for a lock holder with fence > 0: it writes only if no newer
// fence has touched the row (else ErrFenced). With fence 0 it is SetStock.
func SetStockFenced(tx *gorm.DB, id int64, stock int, fence int64) error {
	if fence == 0 {
		return SetStock(tx, id, stock)
	}
	res := tx.Exec(`UPDATE products SET stock = ?, updated_at = now() WHERE id = ? AND fence <= ?`, stock, id, fence)
	if res.Error != nil {
		return fmt.Errorf("set stock of product %d: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return WhyNotWritten(tx, id, fence)
	}
	return nil
}
