package loadgen

import (
	"time"

	"github.com/seckill/seckill/internal/labrun"
)

// inversions counts the sold_out answers to requests sent more than labrun.InversionSlack before
// the last request that bought (an accepted answer counts as bought), and returns them with their
// share of the requests that competed for a unit: those answered bought or sold_out and sent no
// later than that last buyer's. A first-come-first-served sale has none; see docs/loadtest.md.
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
