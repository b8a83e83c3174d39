package loadgen

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// The load models (docs/loadtest.md#load-models).
const (
	ModelOpen   = "open"
	ModelClosed = "closed"
)

// DefaultRate is the arrivals per second of an open run without -rate or -stages.
const DefaultRate = 1000

// Stage ramps the arrival rate linearly to Target per second over Duration.
type Stage struct {
	Duration time.Duration
	Target   float64
}

// Stages are -stages, a flag.Value: 0s:0,2s:20000,30s:20000,5s:0.
type Stages []Stage

// ParseStages reads comma-separated duration:rate stages.
func ParseStages(s string) (Stages, error) {
	var st Stages
	for _, item := range SplitList(s) {
		d, r, ok := strings.Cut(item, ":")
		dur, err1 := time.ParseDuration(strings.TrimSpace(d))
		rate, err2 := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if !ok || err1 != nil || err2 != nil || dur < 0 || rate < 0 || math.IsInf(rate, 0) || math.IsNaN(rate) {
			return nil, fmt.Errorf("stage %q: want duration:rate, such as 2s:20000 (a duration of 0 or more, a rate of 0 or more per second)", item)
		}
		st = append(st, Stage{Duration: dur, Target: rate})
	}
	if len(st) == 0 {
		return nil, fmt.Errorf("want at least one duration:rate stage")
	}
	if st.Total() <= 0 {
		return nil, fmt.Errorf("the stages last 0s: want at least one stage longer than 0")
	}
	return st, nil
}

// Set reads -stages; an empty value clears them: -stages "" runs no stages.
func (st *Stages) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		*st = nil
		return nil
	}
	v, err := ParseStages(s)
	if err != nil {
		return err
	}
	*st = v
	return nil
}

func (st Stages) String() string {
	items := make([]string, len(st))
	for i, s := range st {
		items[i] = s.Duration.String() + ":" + strconv.FormatFloat(s.Target, 'f', -1, 64)
	}
	return strings.Join(items, ",")
}

// Total is how long the stages last.
func (st Stages) Total() (d time.Duration) {
	for _, s := range st {
		d += s.Duration
	}
	return d
}

// Arrivals is how many arrivals the stages schedule: the integral of the rate over them.
func (st Stages) Arrivals() float64 { return newSchedule(0, st).count(st.Total()) }

// schedule is when the arrivals of an open run (or the requests of a paced closed run) are
// due: a piecewise-linear rate whose integral count(t) is the arrivals due by t; arrival k
// (from 0) is due when the integral reaches k. A constant rate is one unbounded stage.
type schedule struct {
	segs []segment
	end  time.Duration // after it nothing is due; math.MaxInt64 for a constant rate
}

// segment is one stage, with the time it starts and the arrivals due before it.
type segment struct {
	start, dur time.Duration
	from, to   float64 // rates per second at its start and end
	before     float64
}

// newSchedule returns the schedule of stages, or of a constant rate when there are none.
func newSchedule(rate float64, stages Stages) schedule {
	if len(stages) == 0 {
		return schedule{segs: []segment{{dur: math.MaxInt64, from: rate, to: rate}}, end: math.MaxInt64}
	}
	var s schedule
	var prev, before float64
	var at time.Duration
	for _, st := range stages {
		if st.Duration > 0 {
			seg := segment{start: at, dur: st.Duration, from: prev, to: st.Target, before: before}
			s.segs = append(s.segs, seg)
			before += seg.arrivals(seg.dur)
		}
		prev, at = st.Target, at+st.Duration
	}
	s.end = at
	return s
}

// arrivals is how many arrivals are due in the first tau of the segment.
func (g segment) arrivals(tau time.Duration) float64 {
	t := tau.Seconds()
	slope := 0.0
	if g.dur != math.MaxInt64 {
		slope = (g.to - g.from) / g.dur.Seconds()
	}
	return g.from*t + slope*t*t/2
}

// count is how many arrivals are due by t: the integral of the rate from 0 to t.
func (s schedule) count(t time.Duration) float64 {
	t = min(t, s.end)
	n := 0.0
	for _, g := range s.segs {
		if t < g.start {
			break
		}
		n = g.before + g.arrivals(min(t-g.start, g.dur))
	}
	return n
}

// at is when arrival k is due, and false when none is: the schedule ends first.
func (s schedule) at(k uint64) (time.Duration, bool) {
	x := float64(k)
	for _, g := range s.segs {
		total := math.Inf(1)
		if g.dur != math.MaxInt64 {
			total = g.before + g.arrivals(g.dur)
		}
		if x >= total {
			continue
		}
		// Solve from*t + a*t² = x-before for t, in the form that is stable when a is 0 or
		// negative (a ramp down): t = 2y / (from + sqrt(from² + 4ay)).
		y := x - g.before
		a := 0.0
		if g.dur != math.MaxInt64 {
			a = (g.to - g.from) / g.dur.Seconds() / 2
		}
		d := g.from + math.Sqrt(max(0, g.from*g.from+4*a*y))
		if d <= 0 {
			if y > 0 {
				continue
			}
			return g.start, true
		}
		t := g.start + time.Duration(2*y/d*float64(time.Second))
		if t >= s.end {
			return 0, false
		}
		return min(t, g.start+g.dur), true
	}
	return 0, false
}

// schedulePacer paces a vegeta attack by a schedule: hit k waits until arrival k is due. A
// pacer that is behind (no worker was free) returns 0 until it has caught up; it stops when
// the schedule ends or after max hits (max 0: no limit).
type schedulePacer struct {
	s   schedule
	max uint64
}

func (p schedulePacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if p.max > 0 && hits >= p.max {
		return 0, true
	}
	due, ok := p.s.at(hits)
	if !ok {
		return 0, true
	}
	return max(0, due-elapsed), false
}

// Rate is the schedule's rate at elapsed, in arrivals per second.
func (p schedulePacer) Rate(elapsed time.Duration) float64 {
	for _, g := range p.s.segs {
		if elapsed >= g.start && elapsed-g.start < g.dur {
			if g.dur == math.MaxInt64 {
				return g.from
			}
			return g.from + (g.to-g.from)*float64(elapsed-g.start)/float64(g.dur)
		}
	}
	return 0
}

// epochPacer runs a pacer on the attack's own epoch rather than on vegeta's: vegeta takes its
// start time inside Attack, after the attack set itself up, and an arrival's lateness is
// measured from the attack's epoch (attack), so the schedule must be too. It stops the attack
// at end (the duration; 0: none) on that epoch: an arrival due at end is sent, none after it.
type epochPacer struct {
	vegeta.Pacer
	epoch time.Time
	end   time.Duration
}

func (p epochPacer) Pace(_ time.Duration, hits uint64) (time.Duration, bool) {
	elapsed := time.Since(p.epoch)
	wait, stop := p.Pacer.Pace(elapsed, hits)
	if stop || p.end > 0 && elapsed+wait > p.end {
		return 0, true
	}
	return wait, false
}
