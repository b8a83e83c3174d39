package loadgen

import (
	"testing"
	"time"
)

// TestInversions: a sold_out request sent more than 5 ms before the last request that bought
// is an inversion; one sent later, or within the slack, is not.
func TestInversions(t *testing.T) {
	t.Parallel()
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	ta := newTally()
	for _, s := range []struct {
		at  time.Duration
		out Outcome
	}{
		{ms(0), Bought},
		{ms(10), SoldOut}, // before the last buyer's request by 20 ms: inverted
		{ms(26), SoldOut}, // 4 ms before: within the slack
		{ms(30), Bought},  // the last buyer
		{ms(31), SoldOut},
		{ms(5), Busy}, // neither bought nor sold out: not counted
	} {
		ta.add(s.at, ms(1), ms(1), s.out)
	}
	n, share := ta.inversions()
	if n != 1 || share != 0.25 {
		t.Errorf("inversions = %d, share %v; want 1 of the 4 sent until the last buyer's, 0.25", n, share)
	}
	only := newTally()
	only.add(0, ms(1), ms(1), SoldOut)
	if n, share := only.inversions(); n != 0 || share != 0 {
		t.Errorf("nothing bought: %d, %v; want none", n, share)
	}
}
