package main

import (
	"testing"
	"time"
)

// TestInversions: a sold_out request sent more than 5 ms before the last request that bought
// is an inversion; one sent later, or within the slack, is not.
func TestInversions(t *testing.T) {
	t.Parallel()
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	samples := []sample{
		{at: ms(0), out: bought},
		{at: ms(10), out: soldOut}, // before the last buyer's request by 20 ms: inverted
		{at: ms(26), out: soldOut}, // 4 ms before: within the slack
		{at: ms(30), out: bought},  // the last buyer
		{at: ms(31), out: soldOut},
		{at: ms(5), out: busy}, // neither bought nor sold out: not counted
	}
	n, share := inversions(samples)
	if n != 1 || share != 0.25 {
		t.Errorf("inversions = %d, share %v; want 1 of the 4 sent until the last buyer's, 0.25", n, share)
	}
	if n, share := inversions([]sample{{at: 0, out: soldOut}}); n != 0 || share != 0 {
		t.Errorf("nothing bought: %d, %v; want none", n, share)
	}
}
