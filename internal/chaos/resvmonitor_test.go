//go:build linux

package chaos_test

import (
	"context"
	"fmt"
	"time"
)

// monitor samples the product in PostgreSQL every 10 ms until the sale stops (see sample).
func (s *resvSale) monitor() {
	for !s.stopping.Load() {
		time.Sleep(10 * time.Millisecond)
		bad, err := s.sample()
		if err != nil {
			s.sampleErrs.Add(1) // PostgreSQL down, in a test that stops it
			continue
		}
		s.samples.Add(1)
		if bad != "" {
			s.mu.Lock()
			s.monitorBad = append(s.monitorBad, bad)
			s.mu.Unlock()
		}
	}
}

// sample reads the product's stock and its live orders in one statement (one snapshot), and
// returns what breaks stock + pending + paid == initial_stock, or pending + paid <=
// initial_stock, in it ("" if nothing).
func (s *resvSale) sample() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var stock, held, initial int64
	err := s.db.QueryRowContext(ctx, `SELECT p.stock, p.initial_stock,
		(SELECT count(*) FROM orders o WHERE o.product_id = p.id AND o.status IN ('pending', 'paid'))
		FROM products p WHERE p.id = $1`, s.id).Scan(&stock, &initial, &held)
	if err != nil {
		return "", err
	}
	if held > s.maxHeld.Load() {
		s.maxHeld.Store(held)
	}
	if stock+held != initial || held > initial || stock < 0 {
		return fmt.Sprintf("snapshot: stock %d + pending and paid %d != initial %d", stock, held, initial), nil
	}
	return "", nil
}
