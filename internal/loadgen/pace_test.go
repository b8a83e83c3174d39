package loadgen

import (
	"testing"
	"time"
)

// TestSellPace samples a dlock-like sale every 250 ms: 30 orders in two group commits by
// 500 ms, then sold out, and sold_out answers until 1.5 s. Its pace is the orders over the
// selling window, 30 / 0.5 s, from the sell-out on, not 0. While it sells, the window runs
// to now; a sale that stops with stock left (a stall) sees its pace fall. The negative
// control is the old figure, the orders of the last interval alone, which this same sale
// shows as 0 at its end: what the live page read as "pace 0.0 orders/s" after selling 30.
func TestSellPace(t *testing.T) {
	type look struct {
		ms      int64
		orders  int64
		selling bool
	}
	sale := []look{{250, 0, true}, {500, 30, false}, {750, 30, false}, {1000, 30, false}, {1250, 30, false}, {1500, 30, false}}
	var p SellPace
	var pace *float64
	var window time.Duration
	prev, lastInterval := int64(0), 0.0
	for _, l := range sale {
		pace, window = p.Observe(time.Duration(l.ms)*time.Millisecond, l.orders, l.selling)
		if l.orders == 0 && pace != nil {
			t.Errorf("at %d ms, before any order: pace %v, want none", l.ms, *pace)
		}
		lastInterval = float64(l.orders-prev) / 0.25
		prev = l.orders
	}
	if pace == nil || !near(*pace, 60) || window != 500*time.Millisecond {
		t.Errorf("after the sell-out: pace %v over %v, want 60 orders/s over 500ms", pace, window)
	}
	if lastInterval != 0 {
		t.Errorf("negative control: the last interval's rate is %v, want the 0 the page used to show", lastInterval)
	}

	// Timed by the load tester: the 30th answer came at 130 ms, seen by the 250 ms sample.
	var timed SellPace
	timed.LastOrderAt(130 * time.Millisecond)
	if pace, window := timed.Observe(500*time.Millisecond, 30, false); pace == nil || window != 130*time.Millisecond || !near(*pace, 30/0.13) {
		t.Errorf("timed: pace %v over %v, want 30 orders over 130ms", pace, window)
	}

	// Still selling: the window runs to now, so a sale that stopped selling slows down.
	var s SellPace
	s.Observe(time.Second, 10, true)
	if pace, window := s.Observe(2*time.Second, 10, true); pace == nil || !near(*pace, 5) || window != 2*time.Second {
		t.Errorf("a stalled sale: pace %v over %v, want 5 orders/s over 2s", pace, window)
	}
	// And when it is over, the window ends at its last order.
	if pace, _ := s.Observe(3*time.Second, 10, false); pace == nil || !near(*pace, 10) {
		t.Errorf("the stalled sale, over: pace %v, want 10 orders/s (to its last order)", pace)
	}
}
