package order

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// SweepStats is what one pass of the sweeper did.
type SweepStats struct {
	Expired     int // reservations expired, their units given back to stock
	GateRetried int // returns whose gate part was driven again (redis and queue strategies)
}

// gateGrace is how long after an order ended the sweeper leaves its return to the gate to the
// process that ended it, before driving it again itself (harmless either way: Gate.Return is
// once per order).
const gateGrace = 2 * time.Second

// Sweep runs one pass of the reservation sweeper, which every API process runs
// (RunSweeper): it expires up to limit pending orders past their pay_by, one product per
// transaction, giving their units back (see returner), and drives again up to limit returns
// to a Redis gate that a process did not finish (killed, or Redis unreachable, between the
// commit and the gate). Sweepers in several processes never end one order twice: each
// expiry is a conditional transition under the product's row lock, and orders a payment
// holds are skipped for the next pass. Safe for concurrent use.
func (s *Service) Sweep(ctx context.Context, limit int) (SweepStats, error) {
	var st SweepStats
	var products []int64
	err := s.c.db.WithContext(ctx).Raw(`SELECT DISTINCT product_id FROM (SELECT product_id FROM orders
		WHERE status = 'pending' AND pay_by <= clock_timestamp() ORDER BY pay_by LIMIT ?) due`, limit).
		Scan(&products).Error
	if err != nil {
		return st, classify(fmt.Errorf("sweep: find expired reservations: %w", err))
	}
	slices.Sort(products)
	for _, id := range products {
		if st.Expired >= limit {
			break
		}
		p, err := s.c.products.Meta(ctx, id)
		if err != nil {
			return st, classify(err)
		}
		ended, err := s.returns.end(ctx, p, 0, limit-st.Expired)
		if err != nil {
			return st, reservationError(err)
		}
		st.Expired += len(ended)
		s.c.observer.Returned(StatusExpired, len(ended))
	}
	n, err := s.retryGates(ctx, limit)
	st.GateRetried = n
	return st, err
}

// retryGates drives again up to limit returns to a gate left unfinished.
func (s *Service) retryGates(ctx context.Context, limit int) (int, error) {
	var rows []struct {
		ID, UserID, ProductID int64
	}
	err := s.c.db.WithContext(ctx).Raw(`SELECT id, user_id, product_id FROM orders
		WHERE gate_returned_at IS NULL AND status IN ('expired', 'cancelled')
		AND ended_at < clock_timestamp() - make_interval(secs => ?) ORDER BY id LIMIT ?`,
		gateGrace.Seconds(), limit).Scan(&rows).Error
	if err != nil {
		return 0, classify(fmt.Errorf("sweep: find returns the gate missed: %w", err))
	}
	byProduct := map[int64][]inventory.Ended{}
	for _, r := range rows {
		byProduct[r.ProductID] = append(byProduct[r.ProductID], inventory.Ended{Order: r.ID, User: r.UserID})
	}
	done := 0
	for id, ended := range byProduct {
		if err := s.returns.toGate(ctx, id, ended); err != nil {
			return done, classify(fmt.Errorf("sweep: return units to the gate of product %d: %w", id, err))
		}
		done += len(ended)
	}
	return done, nil
}

// RunSweeper runs a pass of Sweep every Config.SweepInterval, each of up to
// Config.SweepBatch orders (a pass that did a full batch is followed by another at once),
// until ctx ends. Failures are logged; the next pass retries. With a negative SweepInterval it
// returns at once.
func (s *Service) RunSweeper(ctx context.Context) {
	interval, limit := s.c.cfg.SweepInterval, s.c.cfg.SweepBatch
	if interval < 0 {
		return
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := s.Sweep(ctx, limit)
		switch {
		case err != nil && ctx.Err() == nil:
			s.c.log.WarnContext(ctx, "reservation sweep failed; the next pass retries", "err", err)
		case st.Expired > 0 || st.GateRetried > 0:
			s.c.log.InfoContext(ctx, "reservations swept", "expired", st.Expired, "gate_retried", st.GateRetried)
		}
		next := interval
		if err == nil && (st.Expired >= limit || st.GateRetried >= limit) {
			next = 0 // more are due: go on at once
		}
		t.Reset(next)
	}
}
