package loadgen

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// lineClockSlack is how far loadtest's clock (the answers' arrival), PostgreSQL's
// (created_at) and Redis's (the line's, which calls) may disagree before an admission counts
// as out of turn: one host's clocks, or NTP-disciplined hosts on one LAN.
const lineClockSlack = 5 * time.Millisecond

// HammerBound is how many standard errors better than uniform the hammerers' mean rank may
// be before the verdict says hammering gained: under a fair draw, |z| > 4 has a chance of
// about 3e-5.
const HammerBound = 4.0

// LineFairness is what an opening through a line measured of its order
// (docs/loadtest.md#the-opening-through-a-line): did admissions follow the drawn order, and
// did an early hammerer gain.
type LineFairness struct {
	Rate     int        `json:"rate"`
	WindowMS int        `json:"window_ms"`
	Joins    JoinCounts `json:"joins"`  // before T0
	Places   int64      `json:"places"` // buyers whose drawn place was read after the run
	// Lookups are the follower's reads of places during the run; Left the buyers still
	// waiting for their call when the product sold out, who sent nothing more.
	Lookups      int64 `json:"lookups"`
	LookupErrors int64 `json:"lookup_errors"`
	Left         int64 `json:"left"`
	// Admission order: Admitted buyers (an admitting answer), Unranked of them whose place
	// could not be read; OutOfTurn admitting answers received before their buyer's call
	// (less the slack), AfterWindow sent after the call ended (plus the slack).
	Admitted    int64 `json:"admitted"`
	Unranked    int64 `json:"unranked"`
	OutOfTurn   int64 `json:"out_of_turn"`
	AfterWindow int64 `json:"after_window"`
	// OrdersChecked are PostgreSQL's orders with a ranked buyer, OrdersOutOfTurn of them
	// created before the buyer's call; -1 without the direct audit.
	OrdersChecked   int64 `json:"orders_checked"`
	OrdersOutOfTurn int64 `json:"orders_out_of_turn"`
	// CallMismatch are places whose called_at, as the API reads it, is earlier than the call
	// the rate gives their position (the check uses the later of both).
	CallMismatch int64 `json:"call_mismatch"`
	// Spearman and Kendall correlate the admitted buyers' order of admission with their drawn
	// positions; Discordant pairs were admitted in the order opposite to their draw (allowed
	// when both were called: a called place buys any time in its window). MaxPosition is the
	// last drawn position admitted.
	Spearman     float64    `json:"spearman"`
	Kendall      float64    `json:"kendall"`
	Discordant   int64      `json:"discordant"`
	MaxPosition  int64      `json:"max_position"`
	ClockSlackMS float64    `json:"clock_slack_ms"`
	Hammer       HammerTest `json:"hammer"`
}

// HammerTest compares the hammerers' drawn ranks among the places drawn at T0 (the buyers
// whose join was answered before it), normalised to [0,1] (0 first), with a uniform draw: Z is
// how many standard errors their mean is better (lower) than 0.5.
type HammerTest struct {
	Hammerers  int64   `json:"hammerers"`
	Others     int64   `json:"others"`
	MeanRank   float64 `json:"mean_rank"`
	OthersMean float64 `json:"others_mean_rank"`
	SE         float64 `json:"se"`
	Z          float64 `json:"z"`
	Bound      float64 `json:"bound"`
	Gained     bool    `json:"gained"`
}

// linePlace is a buyer's drawn place: its 1-based position, and its call and its end since T0.
type linePlace struct {
	pos         int64
	call, until time.Duration
}

// admission is an admitting answer to user, sent and received at, since T0.
type admission struct {
	user     int64
	sent, at time.Duration
}

// callAt is when the place of 1-based position pos is called, since T0, at rate places a
// second: rate at T0, then one every 1/rate s, at the whole ms the line's script computes
// (ceil((pos - rate) * 1000 / rate) ms; internal/inventory/lua/line.lua).
func callAt(pos int64, rate int) time.Duration {
	r := int64(rate)
	if pos <= r {
		return 0
	}
	return time.Duration(((pos-r)*1000+r-1)/r) * time.Millisecond
}

// checkTurns counts the admissions received before their buyer's call (less slack), sent
// after its call ended (plus slack), and those whose buyer has no place.
func checkTurns(adm []admission, places map[int64]linePlace, slack time.Duration) (early, late, unranked int64) {
	for _, a := range adm {
		p, ok := places[a.user]
		switch {
		case !ok:
			unranked++
		case a.at < p.call-slack:
			early++
		case a.sent > p.until+slack:
			late++
		}
	}
	return early, late, unranked
}

// orderCorrelation correlates the order of adm (sorted by arrival) with the positions drawn
// in places: Spearman's rho, Kendall's tau, the discordant pairs and the last position.
// Admissions without a place are left out.
func orderCorrelation(adm []admission, places map[int64]linePlace) (rho, tau float64, discordant, maxPos int64) {
	adm = slices.Clone(adm)
	slices.SortStableFunc(adm, func(a, b admission) int { return cmp.Compare(a.at, b.at) })
	var pos []int64
	for _, a := range adm {
		if p, ok := places[a.user]; ok {
			pos = append(pos, p.pos)
			maxPos = max(maxPos, p.pos)
		}
	}
	n := len(pos)
	if n < 2 {
		return 0, 0, 0, maxPos
	}
	// Spearman: Pearson's r of the admission index and the position's rank among pos.
	byPos := make([]int, n)
	for i := range byPos {
		byPos[i] = i
	}
	slices.SortFunc(byPos, func(i, j int) int { return cmp.Compare(pos[i], pos[j]) })
	rank := make([]float64, n)
	for r, i := range byPos {
		rank[i] = float64(r)
	}
	var d2 float64
	for i, r := range rank {
		d2 += (float64(i) - r) * (float64(i) - r)
	}
	nf := float64(n)
	rho = 1 - 6*d2/(nf*(nf*nf-1))
	discordant = inversions(slices.Clone(pos))
	tau = 1 - 4*float64(discordant)/(nf*(nf-1))
	return rho, tau, discordant, maxPos
}

// inversions counts the pairs i < j with a[i] > a[j], sorting a (merge sort).
func inversions(a []int64) int64 {
	if len(a) < 2 {
		return 0
	}
	m := len(a) / 2
	left, right := slices.Clone(a[:m]), slices.Clone(a[m:])
	n := inversions(left) + inversions(right)
	i, j, k := 0, 0, 0
	for i < len(left) && j < len(right) {
		if left[i] <= right[j] {
			a[k] = left[i]
			i++
		} else {
			a[k] = right[j]
			j++
			n += int64(len(left) - i)
		}
		k++
	}
	k += copy(a[k:], left[i:])
	copy(a[k:], right[j:])
	return n
}

// hammerTest tests the positions of the hammerers against the others', all drawn from
// 1..n: the hammerers' mean normalised rank (pos-1)/(n-1) against 0.5, with the standard
// error of the mean of k draws without replacement from a discrete uniform of n values.
func hammerTest(hammerers, others []int64, n int64) HammerTest {
	h := HammerTest{Hammerers: int64(len(hammerers)), Others: int64(len(others)), Bound: HammerBound}
	if n < 2 || len(hammerers) == 0 {
		return h
	}
	norm := func(ps []int64) float64 {
		var s float64
		for _, p := range ps {
			s += float64(p-1) / float64(n-1)
		}
		return s / float64(max(1, len(ps)))
	}
	h.MeanRank, h.OthersMean = norm(hammerers), norm(others)
	k, nf := float64(len(hammerers)), float64(n)
	variance := (nf + 1) / (12 * (nf - 1)) // of one normalised rank
	h.SE = math.Sqrt(variance / k * max(0, nf-k) / (nf - 1))
	if h.SE > 0 {
		h.Z = (0.5 - h.MeanRank) / h.SE
		h.Gained = h.Z > h.Bound
	}
	return h
}

// judgeLine adds to problems what the line f broke: an admission out of turn or after its
// window, an order created before its buyer's call, an admitted buyer without a place, the
// hammerers ranked significantly better than uniform.
func judgeLine(f *LineFairness) (problems []string) {
	if f == nil {
		return nil
	}
	if f.OutOfTurn > 0 {
		problems = append(problems, fmt.Sprintf("line: %d admissions out of turn (answered before the buyer's call)", f.OutOfTurn))
	}
	if f.AfterWindow > 0 {
		problems = append(problems, fmt.Sprintf("line: %d admissions sent after the buyer's call ended", f.AfterWindow))
	}
	if f.OrdersOutOfTurn > 0 {
		problems = append(problems, fmt.Sprintf("line: %d orders created before their buyer's call (PostgreSQL's created_at)", f.OrdersOutOfTurn))
	}
	if f.Unranked > 0 {
		problems = append(problems, fmt.Sprintf("line: %d admitted buyers have no place to check their turn against", f.Unranked))
	}
	if h := f.Hammer; h.Gained {
		problems = append(problems, fmt.Sprintf("line: hammerers' mean rank %.3f is %.1f standard errors better than uniform (bound %.0f)", h.MeanRank, h.Z, h.Bound))
	}
	return problems
}
