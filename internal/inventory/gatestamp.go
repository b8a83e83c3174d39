package inventory

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ErrDataSetChanged means Redis switched data sets during a gate's verification: nothing was
// written to the new one; verify again.
var ErrDataSetChanged = errors.New("inventory: the Redis data set changed")

// Verification is where a verification of a product's gate starts from. A gate's sold out is
// trusted only in the Redis data set it was stamped in (see Gate.Stamp); in another one (Redis
// restarted, maybe from older data, or a replica was promoted) returns recorded in PostgreSQL
// may be missing from it. A verification redoes them (Recover) and stamps the gate (Stamp).
type Verification struct {
	DataSet string // the data set Redis serves now: its replication id
	Seeded  bool   // whether the gate exists
	// Stamped is the data set the gate was stamped in ("" if never), and StampedAt PostgreSQL's
	// time of the read it then agreed with (zero if never).
	Stamped   string
	StampedAt time.Time
}

// Current reports whether the gate was stamped in the data set Redis serves: its sold out is
// true there.
func (v Verification) Current() bool { return v.Stamped != "" && v.Stamped == v.DataSet }

// Verification reads product id's gate's stamp and the data set Redis serves, in one step.
func (g *Gate) Verification(ctx context.Context, id int64) (Verification, error) {
	keys := []string{g.keys.GateStock(id), g.keys.GateStamp(id)}
	res, err := stampCheckScript.Run(ctx, g.rdb, keys).Slice()
	if err != nil || len(res) != 3 {
		return Verification{}, fmt.Errorf("read the stamp of the gate of product %d: %v, %w", id, res, err)
	}
	dataSet, _ := res[0].(string)
	stamp, _ := res[1].(string)
	seeded, _ := res[2].(int64)
	v := Verification{DataSet: dataSet, Seeded: seeded == 1}
	if set, ms, ok := strings.Cut(stamp, "|"); ok {
		n, err := strconv.ParseInt(ms, 10, 64)
		if err != nil {
			return Verification{}, fmt.Errorf("the stamp of the gate of product %d: %q: %w", id, stamp, err)
		}
		v.Stamped, v.StampedAt = set, time.UnixMilli(n)
	}
	return v, nil
}

// Recover redoes in product id's gate, in data set dataSet, the returns of ended reservations
// that the data set may have lost (see lua/recover.lua), scriptChunk at a time, and returns
// how many units it gave back. It returns ErrDataSetChanged if Redis serves another data set,
// ErrGateNotSeeded if the gate is gone.
func (g *Gate) Recover(ctx context.Context, id int64, dataSet string, ended []Ended) (int, error) {
	keys := append(g.gateKeys(id), g.keys.GateReturned(id))
	given := 0
	for start := 0; start < len(ended); start += scriptChunk {
		chunk := ended[start:min(start+scriptChunk, len(ended))]
		args := make([]any, 0, 1+2*len(chunk))
		args = append(args, dataSet)
		for _, e := range chunk {
			args = append(args, e.Order, e.User)
		}
		n, err := recoverScript.Run(ctx, g.rdb, keys, args...).Int()
		switch {
		case err != nil:
			return given, fmt.Errorf("recover returns in gate of product %d: %w", id, err)
		case n == -1:
			return given, fmt.Errorf("recover returns in gate of product %d: %w", id, ErrDataSetChanged)
		case n == -2:
			return given, fmt.Errorf("recover returns in gate of product %d: %w", id, ErrGateNotSeeded)
		}
		given += n
	}
	return given, nil
}

// Stamp records that product id's gate agrees, in data set dataSet, with PostgreSQL's read at
// time at: every return PostgreSQL recorded (gate_returned_at) earlier than at, less the time
// a return's record may take to commit, is counted in it. Its sold out is then trusted in
// that data set. It returns ErrDataSetChanged if Redis serves another data set,
// ErrGateNotSeeded if the gate is gone.
func (g *Gate) Stamp(ctx context.Context, id int64, dataSet string, at time.Time) error {
	keys := []string{g.keys.GateStock(id), g.keys.GateStamp(id)}
	n, err := stampScript.Run(ctx, g.rdb, keys, dataSet, at.UnixMilli()).Int()
	switch {
	case err != nil:
		return fmt.Errorf("stamp gate of product %d: %w", id, err)
	case n == -1:
		return fmt.Errorf("stamp gate of product %d: %w", id, ErrDataSetChanged)
	case n == 0:
		return fmt.Errorf("stamp gate of product %d: %w", id, ErrGateNotSeeded)
	}
	return nil
}
