package inventory

import (
	"errors"
	"fmt"
)

// StaleFenceError matches ErrFenced: the row holds Stored, at least the writer's Fence.
type StaleFenceError struct {
	Product, Fence, Stored int64
}

func (e *StaleFenceError) Error() string {
	return fmt.Sprintf("product %d has fence %d, not below the writer's %d: %v", e.Product, e.Stored, e.Fence, ErrFenced)
}

// Unwrap makes the error match ErrFenced.
func (e *StaleFenceError) Unwrap() error { return ErrFenced }

// StoredFence returns the row's fence from err's *StaleFenceError.
func StoredFence(err error) (int64, bool) {
	var e *StaleFenceError
	if errors.As(err, &e) {
		return e.Stored, true
	}
	return 0, false
}

// FenceAdmits is the SQL condition that fence ? is above the row's; fence 0 (no lock) writes
// only rows no lock has fenced.
const FenceAdmits = `(products.fence < ? OR products.fence = 0 AND CAST(? AS bigint) = 0)`
