package inventory

import (
	"context"
	"fmt"
)

// Ended is a reservation that expired or was cancelled in PostgreSQL.
type Ended struct {
	Order int64
	User  int64
}

// Return gives the ended reservations' units back to the gate once per order and returns how
// many went back now. Call it under the gate's repair lock.
func (g *Gate) Return(ctx context.Context, id int64, ended []Ended) (int, error) {
	if len(ended) == 0 {
		return 0, nil
	}
	args := make([]any, 0, 2*len(ended))
	for _, e := range ended {
		args = append(args, e.Order, e.User)
	}
	keys := append(g.gateKeys(id), g.keys.GateReturned(id))
	n, err := returnScript.Run(ctx, g.rdb, keys, args...).Int()
	if err != nil {
		return 0, fmt.Errorf("return units to gate of product %d: %w", id, err)
	}
	return n, nil
}
