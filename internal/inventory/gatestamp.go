package inventory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrDataSetChanged means Redis switched data sets mid-verification; nothing was written, verify again.
var ErrDataSetChanged = errors.New("inventory: the Redis data set changed")

// Verification is a gate's stamp and Redis's data set (docs/strategies.md#a-gate-from-an-older-data-set).
type Verification struct {
	DataSet string // the data set Redis serves now: its replication id
	Seeded  bool   // whether the gate exists
	// Stamped is the gate's stamped data set and StampedAt its PostgreSQL time; zero if never.
	Stamped   string
	StampedAt time.Time
}

// Current reports whether the gate was stamped in the data set Redis serves.
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

// Recover redoes the returns dataSet may have lost and returns the units given back. Errors:
// ErrDataSetChanged, ErrGateNotSeeded.
func (g *Gate) Recover(ctx context.Context, id int64, dataSet string, ended []Ended) (int, error) {
	keys := append(g.gateKeys(id), g.keys.GateReturned(id))
	return verifyChunks(ctx, g, recoverScript, keys, dataSet, ended, func(e Ended) []any { return []any{e.Order, e.User} },
		fmt.Sprintf("recover returns in gate of product %d", id))
}

// Readmit counts users, who have a live order in PostgreSQL, as the gate's buyers again in
// dataSet (see readmit.lua). Errors: ErrDataSetChanged, ErrGateNotSeeded.
func (g *Gate) Readmit(ctx context.Context, id int64, dataSet string, users []int64) error {
	keys := []string{g.keys.GateStock(id), g.keys.GateBuyers(id)}
	_, err := verifyChunks(ctx, g, readmitScript, keys, dataSet, users, func(u int64) []any { return []any{u} },
		fmt.Sprintf("readmit buyers in gate of product %d", id))
	return err
}

// verifyChunks runs a verification script (ARGV[1] the data set, then each item's arguments)
// over items in chunks and sums its answers; -1 is ErrDataSetChanged, -2 ErrGateNotSeeded.
func verifyChunks[T any](ctx context.Context, g *Gate, script *redis.Script, keys []string, dataSet string,
	items []T, argsOf func(T) []any, what string) (int, error) {
	total := 0
	for chunk := range slices.Chunk(items, scriptChunk) {
		args := []any{dataSet}
		for _, it := range chunk {
			args = append(args, argsOf(it)...)
		}
		n, err := script.Run(ctx, g.rdb, keys, args...).Int()
		switch {
		case err != nil:
			return total, fmt.Errorf("%s: %w", what, err)
		case n == -1:
			return total, fmt.Errorf("%s: %w", what, ErrDataSetChanged)
		case n == -2:
			return total, fmt.Errorf("%s: %w", what, ErrGateNotSeeded)
		}
		total += n
	}
	return total, nil
}

// Stamp records that the gate holds, in dataSet, every return PostgreSQL recorded before at.
// Errors: ErrDataSetChanged, ErrGateNotSeeded.
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
