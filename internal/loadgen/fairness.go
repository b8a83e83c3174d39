package loadgen

import (
	"time"

	"github.com/seckill/seckill/internal/labrun"
)

// inversions counts the sold_out answers to requests sent more than labrun.InversionSlack before the
// last request that bought, and returns them with their share of the requests that competed
// for a unit: those answered bought or sold_out and sent no later than that last buyer's. A
// first-come-first-served sale has none: once a buyer is turned away, nobody who came later
// buys. Comparing with the last buyer is enough: a sold_out request sent before any buyer's
// request was also sent before the last one's. The sold_out answers after the sale are left
// out of the share: they would dilute it without telling anything about the order. An
// accepted answer (queue strategy) counts as bought: its buyer got a unit. The tally keeps
// the sold_out send times to the millisecond, which is what this counts with.
func (t *tally) inversions() (int64, float64) {
	last := t.lastAdmitted
	if last < 0 {
		return 0, 0
	}
	n := t.soldOutWhere(func(ms time.Duration) bool { return labrun.Inverted(ms, last) })
	decided := int64(len(t.admittedAt)) + t.soldOutWhere(func(ms time.Duration) bool { return ms <= last })
	if decided == 0 {
		return 0, 0
	}
	return n, float64(n) / float64(decided)
}
