package order

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// ErrIdempotencyConflict means a restock's key was used before with other units: nothing was added.
var ErrIdempotencyConflict = errors.New("order: idempotency key used before with other units")

// MaxRestockKey is the longest restock key, in characters.
const MaxRestockKey = 128

// Restock is a restock as committed: the first answer to its key, which every retry gets again.
type Restock struct {
	ProductID int64
	Key       string
	Units     int
	CreatedAt time.Time
	Replayed  bool // the key's restock was committed before: nothing was added now
}

// Restock adds units to product id's stock once per key (docs/api.md#merchants-controls): the
// first call commits them; a retry with the key and the same units returns the first's Restock
// (Replayed) and finishes what the first left undone (the gate's part). Errors:
// inventory.ErrNotFound, inventory.ErrInvalid, ErrIdempotencyConflict, ErrUnavailable (nothing
// was added), ErrOutcomeUnknown (retry with the key: it tells).
func (s *Service) Restock(ctx context.Context, id int64, key string, units int) (Restock, error) {
	switch {
	case key == "" || utf8.RuneCountInString(key) > MaxRestockKey || !utf8.ValidString(key):
		return Restock{}, fmt.Errorf("%w: key must be 1 to %d characters of valid UTF-8", inventory.ErrInvalid, MaxRestockKey)
	case units <= 0 || units > inventory.MaxStock:
		return Restock{}, fmt.Errorf("%w: units must be between 1 and %d", inventory.ErrInvalid, inventory.MaxStock)
	}
	p, err := s.c.products.Get(ctx, id)
	if err != nil {
		return Restock{}, classify(err)
	}
	if r, found, err := s.restockOf(ctx, id, key); err != nil || found {
		return s.replay(ctx, p, r, units, err)
	}
	// As a return (returner.end): the sold-out mark is lifted before the units come back, and
	// they must be in PostgreSQL within half the hold of the lift.
	bound := s.c.soldOut.Hold() / 2
	tctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	if err := s.c.liftSoldOut(tctx, id); err != nil {
		return Restock{}, fmt.Errorf("%w: lift the sold-out mark of product %d: %w", ErrUnavailable, id, err)
	}
	var r Restock
	err = s.c.runTx(tctx, func(tx *gorm.DB) error {
		if err := tx.Exec(fmt.Sprintf("SET LOCAL idle_in_transaction_session_timeout = %d", bound.Milliseconds())).Error; err != nil {
			return err
		}
		var rows []Restock
		err := tx.Raw(`INSERT INTO restocks (product_id, key, units, gate_added_at)
			VALUES (?, ?, ?, CASE WHEN ? THEN NULL ELSE clock_timestamp() END)
			ON CONFLICT DO NOTHING RETURNING product_id, key, units, created_at`, id, key, units, gated(p.Strategy)).Scan(&rows).Error
		if err != nil {
			return fmt.Errorf("record restock %q of product %d: %w", key, id, err)
		}
		if len(rows) == 0 {
			r.Replayed = true // the same key, committed meanwhile by another call
			return nil
		}
		r = rows[0]
		_, err = inventory.AddStock(tx, id, units)
		return err
	})
	switch {
	case errors.Is(err, errCommitUnknown):
		return Restock{}, fmt.Errorf("%w: %w", ErrOutcomeUnknown, err)
	case err != nil:
		return Restock{}, classify(err)
	case r.Replayed:
		r, _, err = s.restockOf(ctx, id, key)
		return s.replay(ctx, p, r, units, err)
	}
	s.c.products.Changed(ctx, id) // initial_stock
	if gated(p.Strategy) {
		s.restockGate(ctx, id, r)
	}
	s.controlled(ctx, ControlRestock, id, units, "key", key, "units", units)
	return r, nil
}

// replay answers a restock whose key was committed before (r, or err reading it): with r if
// the units are the same, after driving its gate part if it is missing.
func (s *Service) replay(ctx context.Context, p inventory.Product, r Restock, units int, err error) (Restock, error) {
	if err != nil {
		return Restock{}, classify(err)
	}
	if r.Units != units {
		return Restock{}, fmt.Errorf("%w: restock %q of product %d added %d units, not %d", ErrIdempotencyConflict, r.Key, p.ID, r.Units, units)
	}
	if gated(p.Strategy) {
		s.restockGate(ctx, p.ID, r)
	}
	r.Replayed = true
	s.controlled(ctx, ControlRestockReplay, p.ID, 0, "key", r.Key, "units", r.Units)
	return r, nil
}

// restockOf reads the restock of product id with key, if any.
func (s *Service) restockOf(ctx context.Context, id int64, key string) (Restock, bool, error) {
	var rows []Restock
	err := s.c.db.WithContext(ctx).Raw(`SELECT product_id, key, units, created_at FROM restocks WHERE product_id = ? AND key = ?`,
		id, key).Scan(&rows).Error
	if err != nil {
		return Restock{}, false, fmt.Errorf("read restock %q of product %d: %w", key, id, err)
	}
	if len(rows) == 0 {
		return Restock{}, false, nil
	}
	return rows[0], true, nil
}

// restockGate adds a committed restock's units to product id's gate, unless done before. A
// failure is logged: the sweeper and a retry of the key drive it again (retryRestocks).
func (s *Service) restockGate(ctx context.Context, id int64, r Restock) {
	if err := s.returns.restockToGate(ctx, id, []inventory.Restocked{{Key: r.Key, Units: r.Units}}); err != nil {
		s.c.log.WarnContext(ctx, "restock committed in PostgreSQL, not yet in the gate; the sweeper will retry",
			"product_id", id, "key", r.Key, "err", err)
	}
}

// restockToGate adds the units of restocks of product id to its gate once per key, under the
// gate's repair lock (so that no seeding reads PostgreSQL between the restocks' commit and
// this: see inventory.Seeding.Restocked), and records it on their rows.
func (r *returner) restockToGate(ctx context.Context, id int64, restocks []inventory.Restocked) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gateWait+5*time.Second)
	defer cancel()
	return r.seeder.locks.Do(ctx, r.keys.GateRepairLock(id), 5*time.Second, gateWait, false,
		func(ctx context.Context, _ HeldLock) error {
			keys := make([]string, len(restocks))
			for i, rs := range restocks {
				if _, err := r.gate.Restock(ctx, id, rs); err != nil {
					return err
				}
				keys[i] = rs.Key
			}
			err := r.db.WithContext(ctx).Exec(`UPDATE restocks SET gate_added_at = clock_timestamp()
				WHERE product_id = ? AND key IN ? AND gate_added_at IS NULL`, id, keys).Error
			if err != nil {
				return fmt.Errorf("record the gate's restock of product %d: %w", id, err)
			}
			return nil
		})
}

// retryRestocks drives again up to limit restocks whose gate part is missing, product by
// product (the sweeper's, as retryGates for returns).
func (s *Service) retryRestocks(ctx context.Context, limit int) (int, error) {
	var rows []struct {
		ProductID int64
		Key       string
		Units     int
	}
	err := s.c.db.WithContext(ctx).Raw(`SELECT product_id, key, units FROM restocks WHERE gate_added_at IS NULL
		AND created_at < clock_timestamp() - make_interval(secs => ?) ORDER BY created_at LIMIT ?`,
		gateGrace.Seconds(), limit).Scan(&rows).Error
	if err != nil {
		return 0, classify(fmt.Errorf("sweep: find restocks the gate missed: %w", err))
	}
	byProduct := map[int64][]inventory.Restocked{}
	for _, r := range rows {
		byProduct[r.ProductID] = append(byProduct[r.ProductID], inventory.Restocked{Key: r.Key, Units: r.Units})
	}
	return driveByProduct(ctx, byProduct, "restock", s.returns.restockToGate)
}
