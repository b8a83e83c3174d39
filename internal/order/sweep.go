package order

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/seckill/seckill/internal/inventory"
)

// SweepStats is what one pass of the sweeper did.
type SweepStats struct {
	Expired     int  // reservations expired, their units given back to stock
	Busy        int  // products skipped: another transaction held their row (the next pass retries)
	Failed      int  // products whose return failed (the pass's error says why; the next pass retries)
	GateRetried int  // returns and restocks whose gate part was driven again (redis and queue strategies)
	more        bool // more may be due now: RunSweeper goes on at once
}

// gateGrace is how long after an order ended the sweeper leaves its return to the gate to the
// process that ended it, before driving it again itself (harmless either way: Gate.Return is
// once per order).
const gateGrace = 2 * time.Second

// How many products one pass sweeps at once (most of a product's time may be a sold-out
// lift's wait, which holds nothing), and how many of their transactions it runs at once.
const (
	sweepProducts = 64
	sweepConns    = 4
)

// Sweep expires up to limit overdue reservations of each of up to limit products, joining
// the failed products' errors. Safe for concurrent use.
func (s *Service) Sweep(ctx context.Context, limit int) (SweepStats, error) {
	var st SweepStats
	var due []int64
	err := s.c.db.WithContext(ctx).Raw(`SELECT product_id FROM orders WHERE status = 'pending' AND pay_by <= clock_timestamp()
		GROUP BY product_id ORDER BY min(pay_by), product_id LIMIT ?`, limit).Scan(&due).Error
	if err != nil {
		return st, classify(fmt.Errorf("sweep: find expired reservations: %w", err))
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		errs  []error
		slots = make(chan struct{}, sweepConns)
		going = make(chan struct{}, sweepProducts)
	)
	for _, id := range due {
		going <- struct{}{}
		wg.Go(func() {
			defer func() { <-going }()
			ended, err := s.sweepProduct(ctx, id, limit, slots)
			mu.Lock()
			defer mu.Unlock()
			st.Expired += len(ended)
			st.more = st.more || len(ended) >= limit
			switch {
			case errors.Is(err, errRowBusy):
				st.Busy++
			case err != nil:
				st.Failed++
				errs = append(errs, err)
			}
		})
	}
	wg.Wait()
	// More may be due: a product had a full batch, or the pass took as many products as it may
	// and made progress (so that products busy pass after pass never make it spin).
	st.more = st.more || len(due) >= limit && st.Expired > 0
	n, err := s.retryGates(ctx, limit)
	m, rerr := s.retryRestocks(ctx, limit)
	err, n = errors.Join(err, rerr), n+m
	st.GateRetried = n
	st.more = st.more || n >= limit
	return st, errors.Join(append(errs, err)...)
}

// sweepProduct expires up to limit reservations of product id past their pay_by, holding one
// of slots for its transaction.
func (s *Service) sweepProduct(ctx context.Context, id int64, limit int, slots chan struct{}) ([]inventory.Ended, error) {
	p, err := s.c.products.Meta(ctx, id)
	if err != nil {
		return nil, classify(fmt.Errorf("sweep product %d: %w", id, err))
	}
	ended, err := s.returns.end(ctx, p, ending{limit: limit, slots: slots})
	if errors.Is(err, errRowBusy) {
		return nil, err
	}
	if err != nil {
		return nil, reservationError(err)
	}
	s.c.observer.Returned(StatusExpired, len(ended))
	return ended, nil
}

// retryGates drives again up to limit returns to a gate left unfinished, product by product:
// a product whose gate fails does not stop the others.
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
	return driveByProduct(ctx, byProduct, "return units to", s.returns.toGate)
}

// driveByProduct calls drive with each product's items and returns how many items were driven,
// and the failures, each named "sweep: <what> the gate of product N".
func driveByProduct[T any](ctx context.Context, byProduct map[int64][]T, what string,
	drive func(context.Context, int64, []T) error) (int, error) {
	done, errs := 0, []error(nil)
	for id, items := range byProduct {
		if err := drive(ctx, id, items); err != nil {
			errs = append(errs, classify(fmt.Errorf("sweep: %s the gate of product %d: %w", what, id, err)))
			continue
		}
		done += len(items)
	}
	return done, errors.Join(errs...)
}

// RunSweeper calls Sweep every Config.SweepInterval until ctx ends, logging failures. A
// negative SweepInterval returns at once.
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
			s.c.log.WarnContext(ctx, "reservation sweep failed in part; the next pass retries", "expired", st.Expired,
				"busy", st.Busy, "failed", st.Failed, "gate_retried", st.GateRetried, "err", err)
		case st.Expired > 0 || st.GateRetried > 0 || st.Busy > 0:
			s.c.log.InfoContext(ctx, "reservations swept", "expired", st.Expired, "busy", st.Busy, "gate_retried", st.GateRetried)
		}
		next := interval
		if st.more {
			next = 0 // more are due: go on at once
		}
		t.Reset(next)
	}
}
