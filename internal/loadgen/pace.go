package loadgen

import "time"

// SellPace follows a sale's orders as it is sampled and gives its pace: orders per second from the
// start of the sale to its last order, or to now while it may still sell, the window of
// RunStats.OrdersPerSec, so the live pace ends on the audit's figure (a rate over the last
// interval read 0 between group commits and after the sell-out). The zero value is ready to use;
// it is not safe for concurrent use.
type SellPace struct {
	orders    int64
	lastOrder time.Duration // since the start of the sale, when the orders last rose
	timed     bool          // lastOrder comes from LastOrderAt, not from the samples
}

// LastOrderAt tells p when the last order so far came (since the start of the sale), where
// the caller knows it better than the sample that first saw it: the load tester times each
// answer, while a sample sees an order up to a sampling interval late. Call it before
// Observe; once called, the window ends where it says.
func (p *SellPace) LastOrderAt(at time.Duration) { p.lastOrder, p.timed = at, true }

// Observe records that the sale had orders orders at elapsed since it started, and returns
// its pace and the selling window it was taken over. selling says whether more orders may
// still come (the attack goes on and the stock is not known to be gone): the window then runs
// to elapsed, so that a sale that stops selling sees its pace fall; otherwise it ends at the
// last order. Before the first order there is no pace: nil.
func (p *SellPace) Observe(elapsed time.Duration, orders int64, selling bool) (pace *float64, window time.Duration) {
	if orders > p.orders {
		p.orders = orders
		if !p.timed {
			p.lastOrder = elapsed
		}
	}
	if p.orders <= 0 {
		return nil, 0
	}
	window = p.lastOrder
	if selling {
		window = max(window, elapsed)
	}
	if window <= 0 {
		return nil, 0
	}
	return new(float64(p.orders) / window.Seconds()), window
}
