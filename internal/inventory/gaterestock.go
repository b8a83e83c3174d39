package inventory

import (
	"context"
	"fmt"
)

// Restocked is a restock committed in PostgreSQL: its idempotency key and its units.
type Restocked struct {
	Key   string
	Units int
}

// Restock adds a restock's units to product id's gate once per key and reports whether they
// were added now (not before, and the gate exists). Call it under the gate's repair lock.
func (g *Gate) Restock(ctx context.Context, id int64, r Restocked) (bool, error) {
	keys := []string{g.keys.GateStock(id), g.keys.GateRestocked(id)}
	n, err := restockScript.Run(ctx, g.rdb, keys, r.Key, r.Units).Int()
	if err != nil {
		return false, fmt.Errorf("restock gate of product %d: %w", id, err)
	}
	return n == 1, nil
}

// RecoverRestocks redoes the restocks dataSet may have lost and returns how many it added.
// Errors: ErrDataSetChanged, ErrGateNotSeeded.
func (g *Gate) RecoverRestocks(ctx context.Context, id int64, dataSet string, restocks []Restocked) (int, error) {
	keys := []string{g.keys.GateStock(id), g.keys.GateRestocked(id)}
	return verifyChunks(ctx, g, restockRecover, keys, dataSet, restocks, func(r Restocked) []any { return []any{r.Key, r.Units} },
		fmt.Sprintf("recover restocks in gate of product %d", id))
}
