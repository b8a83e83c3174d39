package order

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/singleflight"
	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// flightBudget bounds one gate seeding or reconciliation, whoever waits for it.
const flightBudget = 60 * time.Second

// flights runs at most one gate seeding or reconciliation per product at a time in this
// process; buyers who need it meanwhile wait for that one, each until its own context ends.
type flights struct{ g singleflight.Group }

// do runs fn under key unless a call under key is in flight, and waits for it or for ctx.
// fn gets a context detached from ctx's cancellation, bounded by flightBudget: others may
// be waiting for it.
func (f *flights) do(ctx context.Context, key string, fn func(ctx context.Context) error) error {
	ch := f.g.DoChan(key, func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flightBudget)
		defer cancel()
		return nil, fn(fctx)
	})
	select {
	case r := <-ch:
		return r.Err
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// seeder seeds and repairs the gates of products (the redis and queue strategies' gates) from
// PostgreSQL, once per product at a time. It is safe for concurrent use.
type seeder struct {
	*core
	gate    *inventory.Gate
	locks   Locker  // the gates' repair locks: RedisLocker(Deps.Locks)
	flights flights // gate seedings and reconciliations, one per product at a time
	// returns drives the returns to the gate that a buyer's ended reservations miss
	// (returner.settleUser), a repair the buyers ask for.
	returns *returner
}

// repairGate runs fn, a repair of product id's gate named what, once per product at a time:
// in this process through flights (buyers who need it meanwhile wait for that one), across
// processes under the gate's repair lock. So a crowd arriving at a gate Redis lost costs
// PostgreSQL one read of the product's buyers, not one per buyer.
func (s *seeder) repairGate(ctx context.Context, what string, id int64, fn func(ctx context.Context) error) error {
	return s.flights.do(ctx, fmt.Sprintf("%s %d", what, id), func(ctx context.Context) error {
		return s.locks.Do(ctx, s.keys.GateRepairLock(id), 5*time.Second, flightBudget, false,
			func(ctx context.Context, _ HeldLock) error { return fn(ctx) })
	})
}

// seedGate loads the gate of product id from PostgreSQL (mode inventory.SeedInit: unless it
// exists; SeedSync: overwriting it), as a repair (see repairGate).
func (s *seeder) seedGate(ctx context.Context, id int64, mode inventory.SeedMode) error {
	return s.repairGate(ctx, string(mode), id, func(ctx context.Context) error {
		if mode == inventory.SeedInit {
			if g, err := s.gate.State(ctx, id); err != nil || g.Seeded {
				return err // seeded meanwhile, by another process
			}
		}
		return s.loadGate(ctx, id, mode)
	})
}

// loadGate copies PostgreSQL's stock and buyers (live orders) of product id into its gate,
// from one consistent snapshot, SeedChunk buyers at a time (keyset order on the unique index).
func (s *seeder) loadGate(ctx context.Context, id int64, mode inventory.SeedMode) error {
	seeding := s.gate.StartSeeding(id)
	loaded := 0
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var at time.Time
		if err := tx.Raw(`SELECT now()`).Row().Scan(&at); err != nil {
			return fmt.Errorf("read PostgreSQL's time: %w", err)
		}
		seeding.At(at)
		stock, err := inventory.Stock(tx, id, false)
		if err != nil {
			return err
		}
		for after := int64(0); ; {
			var chunk []int64
			err := tx.Raw(`SELECT user_id FROM orders WHERE product_id = ? AND user_id > ? AND `+liveStatus+`
				ORDER BY user_id LIMIT ?`,
				id, after, s.cfg.SeedChunk).Scan(&chunk).Error
			if err != nil {
				return fmt.Errorf("read buyers of product %d: %w", id, err)
			}
			if err := seeding.Add(ctx, chunk); err != nil {
				return err
			}
			loaded += len(chunk)
			if len(chunk) < s.cfg.SeedChunk {
				break
			}
			after = chunk[len(chunk)-1]
		}
		// Ended reservations whose units the stock counts and the gate has not taken back yet:
		// their return, driven after this seeding, must not count them again (under the repair
		// lock, which returns to the gate take too, none is given back meanwhile). Nor must the
		// returns recorded lately, which a verification of this gate in an older data set may
		// redo (see verifyGate).
		var unreturned []int64
		err = tx.Raw(`SELECT id FROM orders WHERE product_id = ? AND status IN ('expired', 'cancelled')
			AND (gate_returned_at IS NULL OR gate_returned_at >= ?)`, id, at.Add(-returnSlack)).Scan(&unreturned).Error
		if err != nil {
			return fmt.Errorf("read ended reservations of product %d: %w", id, err)
		}
		seeding.Returned(unreturned)
		// Restocks likewise: their units are in the stock read above (restockToGate).
		var restocked []string
		err = tx.Raw(`SELECT key FROM restocks WHERE product_id = ? AND (gate_added_at IS NULL OR gate_added_at >= ?)`,
			id, at.Add(-returnSlack)).Scan(&restocked).Error
		if err != nil {
			return fmt.Errorf("read restocks of product %d: %w", id, err)
		}
		seeding.Restocked(restocked)
		_, err = seeding.Publish(ctx, mode, stock)
		return err
	}, repeatableRead)
	if err != nil {
		seeding.Abort(context.WithoutCancel(ctx))
		return fmt.Errorf("%s gate of product %d: %w", mode, id, err)
	}
	s.log.InfoContext(ctx, "gate seeded from PostgreSQL", "product_id", id, "mode", string(mode), "buyers", loaded)
	return nil
}
