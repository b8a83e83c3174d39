package loadgen

import "time"

// SellPace gives a sale's orders per second from its start, as RunStats.OrdersPerSec does. The
// zero value is ready; not safe for concurrent use.
type SellPace struct {
	orders    int64
	lastOrder time.Duration // since the start of the sale, when the orders last rose
	timed     bool          // lastOrder comes from LastOrderAt, not from the samples
}

// LastOrderAt sets when the last order came, ending the window there. Call it before Observe.
func (p *SellPace) LastOrderAt(at time.Duration) { p.lastOrder, p.timed = at, true }

// Observe records orders at elapsed and returns the pace (nil before the first order) and its
// window, which runs to elapsed while selling.
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
