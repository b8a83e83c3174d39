package order

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/seckill/seckill/internal/inventory"
)

// returnSlack bounds how far a return's record (gate_returned_at: PostgreSQL's clock in the
// statement that commits it, under the gate's repair lock) may lag the moment of its COMMIT
// on the clock of a later read, a primary's after a failover included: a gate stamped at T
// counts every return recorded before T − returnSlack (see inventory.Gate.Stamp).
const returnSlack = time.Minute

// verifyGate makes product id's gate, sold out in a Redis data set it was not stamped in, agree
// with PostgreSQL again, as a repair (see repairGate): the returns recorded since its stamp
// (less returnSlack) are redone, each once, then it is stamped in the data set Redis serves.
// An error wrapping ErrBusy means the data set changed meanwhile, or the gate went: try again.
func (s *seeder) verifyGate(ctx context.Context, id int64) error {
	return s.repairGate(ctx, "verify", id, func(ctx context.Context) error {
		err := s.verify(ctx, id)
		if errors.Is(err, inventory.ErrDataSetChanged) || errors.Is(err, inventory.ErrGateNotSeeded) {
			err = fmt.Errorf("%w: %w", ErrBusy, err)
		}
		return err
	})
}

// verifyIfStale verifies product id's gate (verifyGate) if it was not stamped in the data set
// Redis serves, and reports whether it did.
func (s *seeder) verifyIfStale(ctx context.Context, id int64) (bool, error) {
	v, err := s.gate.Verification(ctx, id)
	if err != nil || !v.Seeded || v.Current() {
		return false, err
	}
	return true, s.verifyGate(ctx, id)
}

func (s *seeder) verify(ctx context.Context, id int64) error {
	v, err := s.gate.Verification(ctx, id)
	if err != nil || !v.Seeded || v.Current() {
		return err // gone (the seeding that makes it again stamps it), or verified meanwhile
	}
	var since time.Time // the stamp's time less the slack; zero: no stamp, every return
	if !v.StampedAt.IsZero() {
		since = v.StampedAt.Add(-returnSlack)
	}
	var at time.Time
	read, given, readmitted, restocked := 0, 0, 0, 0
	err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		if err := tx.Raw(`SELECT now()`).Row().Scan(&at); err != nil {
			return fmt.Errorf("read PostgreSQL's time: %w", err)
		}
		for afterUser, afterID := int64(0), int64(0); ; {
			var rows []struct{ ID, UserID int64 }
			err := tx.Raw(`SELECT id, user_id FROM orders WHERE product_id = ? AND status IN ('expired', 'cancelled')
				AND (gate_returned_at IS NULL OR gate_returned_at >= ?) AND (user_id, id) > (?, ?)
				ORDER BY user_id, id LIMIT ?`, id, since, afterUser, afterID, s.cfg.SeedChunk).Scan(&rows).Error
			if err != nil {
				return fmt.Errorf("read ended reservations of product %d: %w", id, err)
			}
			ended := make([]inventory.Ended, len(rows))
			for i, r := range rows {
				ended[i] = inventory.Ended{Order: r.ID, User: r.UserID}
			}
			n, err := s.gate.Recover(ctx, id, v.DataSet, ended)
			read, given = read+len(rows), given+n
			if err != nil {
				return err
			}
			if len(rows) < s.cfg.SeedChunk {
				break
			}
			afterUser, afterID = rows[len(rows)-1].UserID, rows[len(rows)-1].ID
		}
		if restocked, err = s.recoverRestocks(ctx, tx, id, v.DataSet, since); err != nil {
			return err
		}
		readmitted, err = s.readmit(ctx, tx, id, v.DataSet, since)
		return err
	}, repeatableRead)
	if err == nil {
		err = s.gate.Stamp(ctx, id, v.DataSet, at)
	}
	if err != nil {
		return fmt.Errorf("verify gate of product %d: %w", id, err)
	}
	log := s.log.InfoContext
	if given > 0 || restocked > 0 {
		log = s.log.WarnContext
	}
	log(ctx, "gate verified in a new Redis data set", "product_id", id, "data_set", v.DataSet, "stamped_in", v.Stamped,
		"returns_checked", read, "units_given_back", given, "buyers_counted_again", readmitted, "restocks_redone", restocked)
	return nil
}

// readmit counts again in the gate every buyer with a live order of product id written since
// since (zero: every one), in chunks, after the returns are redone (a buyer whose reservation
// ended and who bought again must not be taken for a return). It returns how many it read.
func (s *seeder) readmit(ctx context.Context, tx *gorm.DB, id int64, dataSet string, since time.Time) (int, error) {
	read := 0
	for after := int64(0); ; {
		var users []int64
		err := tx.Raw(`SELECT user_id FROM orders WHERE product_id = ? AND `+liveStatus+`
			AND created_at >= ? AND user_id > ? ORDER BY user_id LIMIT ?`, id, since, after, s.cfg.SeedChunk).Scan(&users).Error
		if err != nil {
			return read, fmt.Errorf("read buyers of product %d: %w", id, err)
		}
		if len(users) > 0 {
			if err := s.gate.Readmit(ctx, id, dataSet, users); err != nil {
				return read, err
			}
		}
		read += len(users)
		if len(users) < s.cfg.SeedChunk {
			return read, nil
		}
		after = users[len(users)-1]
	}
}

// recoverRestocks redoes in the gate the restocks of product id recorded in it since since
// (zero: every one), or not yet (see inventory.Gate.RecoverRestocks), and returns how many it
// added.
func (s *seeder) recoverRestocks(ctx context.Context, tx *gorm.DB, id int64, dataSet string, since time.Time) (int, error) {
	var rows []inventory.Restocked
	err := tx.Raw(`SELECT key, units FROM restocks WHERE product_id = ? AND (gate_added_at IS NULL OR gate_added_at >= ?)
		ORDER BY key`, id, since).Scan(&rows).Error
	if err != nil {
		return 0, fmt.Errorf("read restocks of product %d: %w", id, err)
	}
	return s.gate.RecoverRestocks(ctx, id, dataSet, rows)
}
