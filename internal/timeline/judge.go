package timeline

import (
	"cmp"
	"slices"
)

// overlaps returns the spans in which holds of two different lanes intersect, by start.
func overlaps(lanes []Lane) []Span {
	type hold struct {
		Hold
		p string
	}
	var all []hold
	for _, l := range lanes {
		for _, h := range l.Holds {
			all = append(all, hold{h, l.Process})
		}
	}
	slices.SortFunc(all, func(a, b hold) int { return cmp.Compare(a.From, b.From) })
	var out []Span
	for i, a := range all {
		for _, b := range all[i+1:] {
			if b.From >= a.To {
				break // sorted by start: no later hold starts before a ends
			}
			if b.p != a.p && b.To > b.From {
				out = append(out, Span{From: b.From, To: min(a.To, b.To), Processes: []string{a.p, b.p}, Since: a.From})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Span) int { return cmp.Compare(a.From, b.From) })
	return out
}

// judge sums the marks, and finds the focus: the first overlap (or, with none, the first
// refused, cancelled or overselling mark), from the grant of the first of its two holds to the
// first such mark at or after its start.
func (t *Timeline) judge() {
	first := -1.0 // the first refused, cancelled or overselling mark
	for _, l := range t.Lanes {
		for _, m := range l.Marks {
			t.Oversold += m.Oversold
			if m.Refused {
				t.Refused++
			}
			if m.Cancelled {
				t.Cancelled++
			}
		}
	}
	bad := func(m Mark) bool { return m.Refused || m.Cancelled || m.Oversold != 0 }
	from := -1.0
	if len(t.Overlaps) > 0 {
		from = t.Overlaps[0].From
	}
	for _, l := range t.Lanes {
		for _, m := range l.Marks {
			if bad(m) && m.At >= from && (first < 0 || m.At < first) {
				first = m.At
			}
		}
	}
	switch {
	case from >= 0:
		o := t.Overlaps[0]
		t.Focus = &Span{From: o.Since, To: max(first, o.To), Processes: o.Processes}
	case first >= 0:
		t.Focus = &Span{From: first, To: first}
	}
}
