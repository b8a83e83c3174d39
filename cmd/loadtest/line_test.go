package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/seckill/seckill/internal/loadgen"
)

// TestOpeningLineFair runs an opening through a line against three real API processes: a
// redis product of 100 units with a line called 40 places a second, 1,000 buyers who join
// it before T0 (200 hammerers 5 times each, from the first instant; on a loaded machine
// some of the others' joins come too late), then purchase from T0
// as well-behaved clients: on not_your_turn they look their place up and come back at its
// called_at. No admission comes before its buyer's call (loadtest's answers and PostgreSQL's
// created_at), every admitted buyer has a place, the hammerers' ranks are uniform, and the
// first second's answers include not_your_turn.
func TestOpeningLineFair(t *testing.T) {
	_, r, out := runOpening(t, "loadtest run -model opening -line-rate 40", "-strategy", "redis", "-stock", "100",
		"-model", "opening", "-opening-in", "5s", "-burst", "1000", "-burst-window", "100ms",
		"-early-share", "0.2", "-early-hits", "5", "-line-rate", "40", "-line-window", "5s", "-line-tries", "4",
		"-max-workers", "256", "-duration", "20s", "-timeout", "10s", "-seed", "7")
	o := r.Opening
	if o == nil || o.Fairness.Line == nil {
		t.Fatalf("no line in the report:\n%s", out)
	}
	f := o.Fairness.Line
	b, _ := json.Marshal(f)
	t.Logf("line: %s", b)
	if !r.Verdict.OK {
		t.Errorf("verdict %+v", r.Verdict)
	}
	// A loaded machine may not send every join before T0 (the report warns): the hammer test
	// ranks the places drawn at T0, which must be enough of them.
	answered := f.Joins.Sent - f.Joins.Problems[""] // the others got no answer before T0
	if f.Joins.Sent+f.Joins.Unsent != 200*5+800 || f.Joins.Joined != answered || f.Joins.Buyers < 500 {
		t.Errorf("joins %+v: want 1,800 due, every answer 202, at least 500 buyers drawn", f.Joins)
	}
	if f.Joins.Unsent > 0 {
		t.Logf("%d joins not sent before T0 (the machine is loaded)", f.Joins.Unsent)
	}
	if f.Places != 1000 || f.Admitted != 100 || f.Unranked != 0 {
		t.Errorf("places %d, admitted %d (unranked %d): want every buyer placed, the 100 units admitted, each to a placed buyer", f.Places, f.Admitted, f.Unranked)
	}
	if f.OutOfTurn != 0 || f.AfterWindow != 0 || f.OrdersChecked != 100 || f.OrdersOutOfTurn != 0 || f.CallMismatch != 0 {
		t.Errorf("turns %+v: want none out of turn of 100 orders", f)
	}
	// 40 called at T0, then one every 25 ms: no position admitted beyond the head at the
	// sell-out, and admission follows the draw across the calls.
	if o.SellOutMS == nil {
		t.Fatalf("not sold out: %+v", o)
	}
	if head := int64(40 + math.Ceil(40**o.SellOutMS/1000)); f.MaxPosition > head || f.Spearman <= 0 {
		t.Errorf("last position admitted %d, Spearman %.3f: want at most %d (called by T0+%.0f ms), a positive correlation",
			f.MaxPosition, f.Spearman, head, *o.SellOutMS)
	}
	if h := f.Hammer; h.Hammerers != 200 || h.Others != f.Joins.Buyers-200 || h.Gained || h.SE <= 0 {
		t.Errorf("hammer test %+v: want 200 hammerers ranked as uniform", h)
	}
	if got := o.FirstSecond.Outcomes[loadgen.NotYourTurn]; got == 0 {
		t.Errorf("first second %v: want not_your_turn answers", o.FirstSecond.Outcomes)
	}
	if r.Stats.Outcomes[loadgen.Other4xx] != 0 || r.Stats.Outcomes[loadgen.SaleNotStarted] != 0 {
		t.Errorf("outcomes %v: want no other_4xx and no sale_not_started", r.Stats.Outcomes)
	}
	if a := r.Audit; a == nil || a.Direct == nil || a.Direct.Oversold != 0 || a.Direct.Orders != 100 || !a.Direct.Consistent {
		t.Errorf("direct audit %+v", a)
	}
	for _, want := range []string{"line ", "turns ", "hammerers "} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
}
