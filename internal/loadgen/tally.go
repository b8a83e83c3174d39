package loadgen

import (
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// tally is what an attack keeps of its answers, in memory bounded by the run's length, not by
// its requests: the latency histograms (raw, corrected, by outcome), the sale's window, the
// send times of the admitting answers (at most about the stock) and of the sold_out answers,
// counted by the millisecond (4 bytes per millisecond of attack: 14 MB an hour), from which
// summarize reads the rejections after the sale and the inversions. It is not safe for
// concurrent use: the attack loop alone adds to it.
type tally struct {
	raw, corrected *hdrhistogram.Histogram
	byOutcome      [NumOutcomes]*hdrhistogram.Histogram
	n              int64
	// first is the earliest send, last the latest answer, sellEnd the latest admitting answer;
	// all since the attack began. lastAdmitted is the latest send of an admitting answer; -1
	// before one.
	first, last, sellEnd, lastAdmitted time.Duration
	admittedAt                         []time.Duration
	soldOutMS                          []int32
}

func newTally() *tally {
	return &tally{raw: newHist(), corrected: newHist(), lastAdmitted: -1}
}

// add counts one answer to a request sent at at (since the attack began), lat after it was
// sent and corrected after it was due, whose outcome is o.
func (t *tally) add(at, lat, corrected time.Duration, o Outcome) {
	if t.n == 0 || at < t.first {
		t.first = at
	}
	t.n++
	t.last = max(t.last, at+lat)
	record(t.raw, lat)
	record(t.corrected, max(corrected, lat))
	if o >= NumOutcomes {
		return
	}
	if t.byOutcome[o] == nil {
		t.byOutcome[o] = newHist()
	}
	record(t.byOutcome[o], lat)
	switch {
	case o.admits():
		t.sellEnd = max(t.sellEnd, at+lat)
		t.lastAdmitted = max(t.lastAdmitted, at)
		t.admittedAt = append(t.admittedAt, at)
	case o == SoldOut:
		ms := max(0, int(at/time.Millisecond))
		for len(t.soldOutMS) <= ms {
			t.soldOutMS = append(t.soldOutMS, 0)
		}
		t.soldOutMS[ms]++
	}
}

// unsent counts an arrival that was due and never sent, in the corrected latencies only, at
// wait: from when it was due until the attack stopped sending.
func (t *tally) unsent(wait time.Duration) { record(t.corrected, wait) }

// soldOutWhere counts the sold_out answers whose request was sent in a millisecond ms
// (since the attack began) for which keep is true.
func (t *tally) soldOutWhere(keep func(ms time.Duration) bool) (n int64) {
	for i, c := range t.soldOutMS {
		if c > 0 && keep(time.Duration(i)*time.Millisecond) {
			n += int64(c)
		}
	}
	return n
}
