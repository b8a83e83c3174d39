package inventory

import (
	"errors"
	"fmt"
)

// StaleFenceError is the ErrFenced of a fenced write: the row holds Stored, at least the
// writer's Fence. See docs/dlock.md#if-redis-loses-its-data.
type StaleFenceError struct {
	Product, Fence, Stored int64
}

func (e *StaleFenceError) Error() string {
	return fmt.Sprintf("product %d has fence %d, not below the writer's %d: %v", e.Product, e.Stored, e.Fence, ErrFenced)
}

// Unwrap makes the error match ErrFenced.
func (e *StaleFenceError) Unwrap() error { return ErrFenced }

// StoredFence is the fence the row held when err, a fenced write's error, refused the write.
func StoredFence(err error) (int64, bool) {
	var e *StaleFenceError
	if errors.As(err, &e) {
		return e.Stored, true
	}
	return 0, false
}

// FenceAdmits is the SQL condition under which a write with fence ? may write a product
// row: a fence above every fence written before (one write per grant, so an equal fence is
// another grant's). Fence 0 is no lock (the redis and queue strategies): it writes only rows
// no lock has fenced.
const FenceAdmits = `(products.fence < ? OR products.fence = 0 AND CAST(? AS bigint) = 0)`
