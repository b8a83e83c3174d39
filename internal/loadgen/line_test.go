package loadgen

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// TestCallAt: rate places are called at T0, then one every 1/rate s, at the line script's
// whole ms (ceil).
func TestCallAt(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, c := range []struct {
		pos  int64
		rate int
		want time.Duration
	}{{1, 40, 0}, {40, 40, 0}, {41, 40, 25 * ms}, {80, 40, time.Second}, {4, 3, 334 * ms}, {1000, 200, 4 * time.Second}} {
		if got := callAt(c.pos, c.rate); got != c.want {
			t.Errorf("callAt(%d, %d) = %s, want %s", c.pos, c.rate, got, c.want)
		}
	}
}

// TestCheckTurns: an admission answered before its buyer's call (beyond the slack) is out of
// turn, one sent after the call ended is late, one without a place is unranked; the others,
// including one within the slack, pass.
func TestCheckTurns(t *testing.T) {
	t.Parallel()
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	places := map[int64]linePlace{
		1: {pos: 1, call: 0, until: ms(5000)},
		2: {pos: 2, call: ms(100), until: ms(5100)},
		3: {pos: 3, call: ms(200), until: ms(5200)},
	}
	fair := []admission{{user: 1, sent: ms(1), at: ms(3)}, {user: 2, sent: ms(90), at: ms(97)}, {user: 3, sent: ms(250), at: ms(260)}}
	if e, l, u := checkTurns(fair, places, lineClockSlack); e+l+u != 0 {
		t.Errorf("fair admissions: %d early, %d late, %d unranked; want none", e, l, u)
	}
	bad := []admission{{user: 2, sent: ms(10), at: ms(94)}, {user: 3, sent: ms(5300), at: ms(5301)}, {user: 9, at: ms(1)}}
	if e, l, u := checkTurns(bad, places, lineClockSlack); e != 1 || l != 1 || u != 1 {
		t.Errorf("control: %d early, %d late, %d unranked; want one of each", e, l, u)
	}
}

// TestOrderCorrelation: admissions in the drawn order correlate 1, in reverse -1, with the
// discordant pairs counted as a brute force counts them.
func TestOrderCorrelation(t *testing.T) {
	t.Parallel()
	places := map[int64]linePlace{}
	var inOrder, reversed []admission
	for u := range int64(50) {
		places[u] = linePlace{pos: u + 1}
		inOrder = append(inOrder, admission{user: u, at: time.Duration(u)})
		reversed = append(reversed, admission{user: u, at: time.Duration(100 - u)})
	}
	if rho, tau, d, last := orderCorrelation(inOrder, places); rho != 1 || tau != 1 || d != 0 || last != 50 {
		t.Errorf("in order: rho %v tau %v discordant %d last %d; want 1, 1, 0, 50", rho, tau, d, last)
	}
	if rho, tau, d, _ := orderCorrelation(reversed, places); math.Abs(rho+1) > 1e-12 || math.Abs(tau+1) > 1e-12 || d != 50*49/2 {
		t.Errorf("reversed: rho %v tau %v discordant %d; want -1, -1, 1225", rho, tau, d)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		a := make([]int64, rng.IntN(300))
		for i := range a {
			a[i] = rng.Int64N(1000)
		}
		var want int64
		for i := range a {
			for j := i + 1; j < len(a); j++ {
				if a[i] > a[j] {
					want++
				}
			}
		}
		if got := inversions(slices.Clone(a)); got != want {
			t.Fatalf("inversions = %d, brute force %d", got, want)
		}
	}
}

// TestHammerTest: with ranks drawn uniformly (a random permutation) the hammerers' z is a
// standard normal and never past the bound over 2,000 draws; two biased rank sources, the
// controls, must fail it: places by first join (the hammerers join first) and a draw again
// at each join keeping the best (hammering buys draws), with 2 joins each.
func TestHammerTest(t *testing.T) {
	t.Parallel()
	const n, k = 1000, 200
	rng := rand.New(rand.NewPCG(3, 4))
	var sum, sum2 float64
	const draws = 2000
	for range draws {
		perm := rng.Perm(n)
		ham, others := ranks(perm[:k]), ranks(perm[k:])
		h := hammerTest(ham, others, n)
		if h.Gained {
			t.Fatalf("a uniform draw gained: %+v", h)
		}
		sum, sum2 = sum+h.Z, sum2+h.Z*h.Z
	}
	mean, sd := sum/draws, math.Sqrt(sum2/draws-(sum/draws)*(sum/draws))
	if math.Abs(mean) > 0.1 || math.Abs(sd-1) > 0.1 {
		t.Errorf("z over uniform draws: mean %.3f sd %.3f, want about 0 and 1 (the standard error is wrong)", mean, sd)
	}
	byArrival := hammerTest(ranks(seq(0, k)), ranks(seq(k, n)), n)
	if !byArrival.Gained {
		t.Errorf("control by arrival passed: %+v", byArrival)
	}
	// Each hammerer draws twice and keeps the better score; the places are the scores' order.
	scores := make([]float64, n)
	for i := range scores {
		scores[i] = rng.Float64()
		if i < k {
			scores[i] = min(scores[i], rng.Float64())
		}
	}
	order := seq(0, n)
	slices.SortFunc(order, func(a, b int) int { return cmpFloat(scores[a], scores[b]) })
	pos := make([]int64, n)
	for p, i := range order {
		pos[i] = int64(p + 1)
	}
	redraw := hammerTest(pos[:k], pos[k:], n)
	if !redraw.Gained {
		t.Errorf("control drawing again passed: %+v", redraw)
	}
	t.Logf("controls: by arrival z %.1f, drawing again z %.1f", byArrival.Z, redraw.Z)
}

// TestDrawnRanks: the buyers whose join was not answered before T0 (placed at the back) are
// left out, and the others ranked 1..n in the order of their positions.
func TestDrawnRanks(t *testing.T) {
	t.Parallel()
	places := map[int64]linePlace{10: {pos: 3}, 11: {pos: 6}, 12: {pos: 1}, 13: {pos: 4}, 14: {pos: 7}, 15: {pos: 8}}
	joined := map[int64]bool{10: true, 11: true, 12: true, 13: true}
	ham, others, n := drawnRanks(places, joined, 10, 2)
	slices.Sort(ham)
	slices.Sort(others)
	if n != 4 || !slices.Equal(ham, []int64{2, 4}) || !slices.Equal(others, []int64{1, 3}) {
		t.Errorf("ranks %v and %v of %d; want [2 4] and [1 3] of 4", ham, others, n)
	}
}

// TestJudgeLine: each breach is a problem of the verdict; a clean line has none.
func TestJudgeLine(t *testing.T) {
	t.Parallel()
	if p := judgeLine(&LineFairness{Admitted: 10}); len(p) != 0 {
		t.Errorf("clean line: %v", p)
	}
	for _, f := range []LineFairness{{OutOfTurn: 1}, {AfterWindow: 1}, {OrdersOutOfTurn: 1}, {Unranked: 1}, {Hammer: HammerTest{Gained: true}}} {
		if p := judgeLine(&f); len(p) != 1 || !strings.HasPrefix(p[0], "line: ") {
			t.Errorf("%+v: problems %v, want one", f, p)
		}
	}
	v := verdict{OK: true, Label: "PASS"}
	r := &OpeningReport{Fairness: Fairness{Line: &LineFairness{OutOfTurn: 1}}}
	r.Burst.Sent = 1
	if judgeOpening(&v, "redis", 1, r); v.OK || v.Label != "FAIL" {
		t.Errorf("an admission out of turn: verdict %+v, want FAIL", v)
	}
}

// TestLineJoins: 10 buyers, 3 hammerers joining 4 times each from the first instant, the
// others once: 19 joins within [0, early), the hammerers' first ones first.
func TestLineJoins(t *testing.T) {
	t.Parallel()
	o := Opening{Burst: 10, EarlyShare: 0.3, EarlyHits: 4}
	js := lineJoins(o, 100, 1, time.Second)
	if len(js) != 19 {
		t.Fatalf("%d joins, want 19", len(js))
	}
	per := map[int64]int{}
	for i, j := range js {
		per[j.user]++
		if j.at < 0 || j.at >= time.Second || i > 0 && j.at < js[i-1].at {
			t.Errorf("join %d at %s: want in [0, 1s), in order", i, j.at)
		}
	}
	for u := int64(100); u < 110; u++ {
		if want := map[bool]int{true: 4, false: 1}[u < 103]; per[u] != want {
			t.Errorf("buyer %d joins %d times, want %d", u, per[u], want)
		}
	}
	if js[0].user != 100 || js[1].user != 101 || js[2].user != 102 || js[0].at != 0 {
		t.Errorf("first joins %v: want the hammerers at 0", js[:3])
	}
}

// TestLineFollower: the follower releases the burst in due order, one purchase per Pace,
// and stops once every buyer is answered; once one is answered sold_out, the buyers still
// waiting leave.
func TestLineFollower(t *testing.T) {
	t.Parallel()
	o := Opening{Burst: 5, Window: 10 * time.Millisecond, LineTries: 2}
	f := newLineFollower([]string{"http://x/p"}, nil, 1, o, 10, 1, nil, time.Now(), 5*time.Millisecond, time.Second)
	seen := map[int64]bool{}
	for range 5 {
		if _, stop := f.Pace(0, 0); stop {
			t.Fatal("stopped early")
		}
		var tg vegeta.Target
		if err := f.Target(&tg); err != nil {
			t.Fatal(err)
		}
		u := requestUser(tg.Body)
		seen[u] = true
		f.answered(u, Bought, "")
	}
	if _, stop := f.Pace(0, 0); !stop || len(seen) != 5 {
		t.Errorf("stop %v after %d buyers; want to stop after 5", stop, len(seen))
	}
	g := newLineFollower([]string{"http://x/p"}, nil, 1, o, 10, 1, nil, time.Now(), 0, time.Second)
	g.Pace(0, 0)
	var tg vegeta.Target
	if err := g.Target(&tg); err != nil {
		t.Fatal(err)
	}
	g.answered(requestUser(tg.Body), SoldOut, "")
	if _, stop := g.Pace(0, 0); !stop || g.left != 4 {
		t.Errorf("after sold_out: stop %v, left %d; want to stop, 4 left", stop, g.left)
	}
}

func seq(from, to int) []int {
	s := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// ranks are the 1-based positions of 0-based indices.
func ranks(idx []int) []int64 {
	r := make([]int64, len(idx))
	for i, x := range idx {
		r[i] = int64(x + 1)
	}
	return r
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
