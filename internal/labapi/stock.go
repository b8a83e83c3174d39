package labapi

import (
	"fmt"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// The teaching strategies' reads and writes (naive, and the lab, docs/lab.md): a plain read and an
// unconditional write of the stock, so that the lab's lock alone guards it; with a fence,
// both check it.

// claimStock reads a lab product's stock for a lock holder. With fence > 0 it first records
// fence on the row, unless one at least as large is there (an *inventory.StaleFenceError, inventory.ErrFenced): from
// then on, a holder with an older fence can no longer write, even one that read the same
// stock before it. That is the
// fencing token checked by the storage on every access; a fence checked only on the write
// would let an older holder's write land between a newer holder's read and its write.
func claimStock(tx *gorm.DB, id int64, fence int64) (int, error) {
	if fence == 0 {
		return inventory.Stock(tx, id, false)
	}
	var stock []int
	err := tx.Raw(`UPDATE products SET fence = ? WHERE id = ? AND `+inventory.FenceAdmits+` RETURNING stock`,
		fence, id, fence, fence).Scan(&stock).Error
	if err != nil {
		return 0, fmt.Errorf("claim product %d: %w", id, err)
	}
	if len(stock) == 0 {
		return 0, inventory.WhyNotWritten(tx, id, fence)
	}
	return stock[0], nil
}

// swapStock is SetStock for a lock holder that claimed the row with claimStock: it writes only if
// the row still holds fence (else inventory.ErrFenced; fence 0 always writes) and returns the
// stock it overwrote, with the row locked until tx ends, for the lab's timeline to compare. It
// locks FOR NO KEY UPDATE, as the UPDATE does, not FOR UPDATE, which the order's foreign key lock
// would deadlock with (docs/lab.md).
func swapStock(tx *gorm.DB, id int64, stock int, fence int64) (before int, err error) {
	q := `WITH old AS (SELECT stock FROM products WHERE id = ? FOR NO KEY UPDATE)
		UPDATE products SET stock = ?, updated_at = now() FROM old WHERE products.id = ?`
	args := []any{id, stock, id}
	if fence != 0 {
		q, args = q+` AND products.fence = ?`, append(args, fence)
	}
	var old []int
	err = tx.Raw(q+` RETURNING old.stock`, args...).Scan(&old).Error
	if err != nil {
		return 0, fmt.Errorf("set stock of product %d: %w", id, err)
	}
	if len(old) == 0 {
		return 0, inventory.WhyNotWritten(tx, id, fence)
	}
	return old[0], nil
}
