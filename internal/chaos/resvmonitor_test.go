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

// sample reads the product's stock and its orders in one statement (one snapshot), through
// the sale's watch (which records when it first saw each order, and each order ended: bounds
// the history check uses), and returns what breaks stock + pending + paid == initial_stock,
// or pending + paid <= initial_stock, in it ("" if nothing).
func (s *resvSale) sample() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	v, err := s.watch.Sample(ctx)
	if err != nil {
		return "", err
	}
	if v.Live > s.maxHeld.Load() {
		s.maxHeld.Store(v.Live)
	}
	if v.Stock+v.Live != v.Initial || v.Live > v.Initial || v.Stock < 0 {
		return fmt.Sprintf("snapshot: stock %d + pending and paid %d != initial %d", v.Stock, v.Live, v.Initial), nil
	}
	return "", nil
}
