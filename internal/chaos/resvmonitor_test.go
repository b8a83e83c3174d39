//go:build linux

package chaos_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

// sample reads the product's stock and its orders in one statement (one snapshot), records
// when it first saw each order, and each order ended (seenWritten, seenEnded: the order was
// written, or its unit back in PostgreSQL, by then; bounds the history check uses), and
// returns what breaks stock +
// pending + paid == initial_stock, or pending + paid <= initial_stock, in it ("" if
// nothing).
func (s *resvSale) sample() (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var stock, held, initial int64
	var ended string
	err := s.db.QueryRowContext(ctx, `SELECT p.stock, p.initial_stock,
		(SELECT count(*) FROM orders o WHERE o.product_id = p.id AND o.status IN ('pending', 'paid')),
		(SELECT coalesce(string_agg(o.id || CASE WHEN o.status IN ('expired', 'cancelled') THEN 'e' ELSE '' END, ','), '')
			FROM orders o WHERE o.product_id = p.id)
		FROM products p WHERE p.id = $1`, s.id).Scan(&stock, &initial, &held, &ended)
	if err != nil {
		return "", err
	}
	s.saw(ended, time.Now())
	if held > s.maxHeld.Load() {
		s.maxHeld.Store(held)
	}
	if stock+held != initial || held > initial || stock < 0 {
		return fmt.Sprintf("snapshot: stock %d + pending and paid %d != initial %d", stock, held, initial), nil
	}
	return "", nil
}

// saw records at as when the orders of ids were first seen: "id" written, "ide" ended too.
func (s *resvSale) saw(ids string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range strings.Split(ids, ",") {
		id, err := strconv.ParseInt(strings.TrimSuffix(f, "e"), 10, 64)
		if err != nil {
			continue
		}
		if _, ok := s.seenWritten[id]; !ok {
			s.seenWritten[id] = at
		}
		if _, ok := s.seenEnded[id]; !ok && strings.HasSuffix(f, "e") {
			s.seenEnded[id] = at
		}
	}
}
